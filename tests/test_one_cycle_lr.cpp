// OneCycleLR's options (anneal_strategy, three_phase, epochs * steps_per_epoch, a max_lr and
// momenta per group) against values worked by hand and against a float64 reference of
// torch.optim.lr_scheduler.OneCycleLR.get_lr, written here from PyTorch's formulas, on fresh
// random cycles.
#include <cmath>
#include <numbers>

#include "hwaro/optim/lr_scheduler.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

struct Cycle {
  std::int64_t total;
  double pct_start, max_lr, div = 25, final_div = 1e4;
  bool three_phase = false, linear = false;
  double base_m = 0.85, max_m = 0.95;
};

// PyTorch's get_lr at `step` for one group: the phase table of __init__ (each phase's end_step,
// and the lr and momentum at its two ends), the first phase whose end_step is not below the step
// (or the last one), pct = (step - the previous end_step) / (end_step - the previous end_step),
// and _annealing_cos or _annealing_linear. Returns {lr, momentum}.
std::pair<double, double> reference(std::int64_t step, const Cycle& c) {
  const double n = static_cast<double>(c.total), initial = c.max_lr / c.div, min_lr = initial / c.final_div;
  const double base_m = c.base_m, max_m = c.max_m;
  struct Row {
    double end, lr_from, lr_to, m_from, m_to;
  };
  std::vector<Row> rows = {{c.pct_start * n - 1, initial, c.max_lr, max_m, base_m}};
  if (c.three_phase) {
    rows.push_back({2 * c.pct_start * n - 2, c.max_lr, initial, base_m, max_m});
    rows.push_back({n - 1, initial, min_lr, max_m, max_m});
  } else {
    rows.push_back({n - 1, c.max_lr, min_lr, base_m, max_m});
  }
  const auto anneal = [&](double from, double to, double pct) {
    return c.linear ? (to - from) * pct + from : to + (from - to) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  };
  const double s = static_cast<double>(step);
  double start = 0;
  for (std::size_t i = 0;; ++i) {
    if (s <= rows[i].end || i + 1 == rows.size()) {
      const double pct = (s - start) / (rows[i].end - start);
      return {anneal(rows[i].lr_from, rows[i].lr_to, pct), anneal(rows[i].m_from, rows[i].m_to, pct)};
    }
    start = rows[i].end;
  }
}

optim::OneCycleLROptions options_of(const Cycle& c) {
  return {.max_lr = {c.max_lr},
          .total_steps = c.total,
          .pct_start = c.pct_start,
          .anneal_strategy = c.linear ? "linear" : "cos",
          .div_factor = c.div,
          .final_div_factor = c.final_div,
          .three_phase = c.three_phase};
}

// The lr and momentum of group 0 after construction and after each of total_steps steps.
std::vector<std::pair<double, double>> run_cycle(optim::Optimizer& opt, optim::OneCycleLR& sched, std::int64_t total) {
  std::vector<std::pair<double, double>> out = {{opt.param_groups()[0].lr, *opt.param_groups()[0].momentum}};
  for (std::int64_t i = 0; i < total; ++i) {
    sched.step();
    out.emplace_back(opt.param_groups()[0].lr, *opt.param_groups()[0].momentum);
  }
  return out;
}

// total 10, pct_start 0.3, max_lr 1, div 25, final_div 1e4: initial_lr 0.04, min_lr 4e-6; the
// phases end at steps 2, 4 and 9. Linear: up by 0.48 a step, down by 0.48 a step, then down to
// 4e-6 in five equal steps of 0.0079992; the momentum 0.95 -> 0.85 -> 0.95, then flat.
TEST(OneCycleLR, ThreeLinearPhasesByHand) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  optim::OneCycleLR sched(opt, {.max_lr = {1.0}, .total_steps = 10, .anneal_strategy = "linear", .three_phase = true});
  const std::vector<double> lrs = {0.04, 0.52, 1.0, 0.52, 0.04, 0.0320008, 0.0240016, 0.0160024, 0.0080032, 4e-6};
  const std::vector<double> momenta = {0.95, 0.9, 0.85, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95};
  const auto got = run_cycle(opt, sched, 9);
  for (std::size_t i = 0; i < lrs.size(); ++i) {
    EXPECT_NEAR(got[i].first, lrs[i], 1e-15) << "step " << i;
    EXPECT_NEAR(got[i].second, momenta[i], 1e-15) << "step " << i;
  }
}

TEST(OneCycleLR, EachAnnealStrategyAndPhaseCountFollowsPyTorchsFormula) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (bool three_phase : {false, true}) {
    for (bool linear : {false, true}) {
      for (int trial = 0; trial < 3; ++trial) {
        // pct_start below 0.45 leaves the third phase a step for any total of 10 or more.
        const Cycle c{.total = std::uniform_int_distribution<std::int64_t>(10, 300)(rng),
                      .pct_start = std::uniform_real_distribution<double>(0.15, 0.45)(rng),
                      .max_lr = std::uniform_real_distribution<double>(0.01, 2.0)(rng),
                      .div = std::uniform_real_distribution<double>(2, 50)(rng),
                      .three_phase = three_phase,
                      .linear = linear};
        SCOPED_TRACE("total " + std::to_string(c.total) + " pct_start " + std::to_string(c.pct_start) +
                     (three_phase ? " three phases" : " two phases") + (linear ? " linear" : " cos"));
        Tensor p = zeros({3}).set_requires_grad(true);
        optim::Adam opt({p}, {.lr = 1e-3});
        optim::OneCycleLR sched(opt, options_of(c));
        const auto got = run_cycle(opt, sched, c.total);
        for (std::int64_t step = 0; step <= c.total; ++step) {
          const auto [lr, momentum] = reference(step, c);
          EXPECT_NEAR(got[step].first, lr, 1e-12 * c.max_lr) << "step " << step;
          EXPECT_NEAR(got[step].second, momentum, 1e-12) << "step " << step;
        }
        EXPECT_THROW(sched.step(), Error);
      }
    }
  }
}

// epochs * steps_per_epoch is the cycle when total_steps is not given; total_steps wins when both are.
TEST(OneCycleLR, EpochsTimesStepsPerEpochIsTheCycle) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  optim::OneCycleLR sched(opt, {.max_lr = {0.1}, .epochs = 3, .steps_per_epoch = 7});
  const auto got = run_cycle(opt, sched, 21);
  const Cycle c{.total = 21, .pct_start = 0.3, .max_lr = 0.1};
  for (std::int64_t step = 0; step <= 21; ++step) {
    EXPECT_NEAR(got[step].first, reference(step, c).first, 1e-14) << "step " << step;
  }
  EXPECT_TRUE(throws_with<Error>([&] { sched.step(); }, "stepped 22 times but total_steps is 21"));

  optim::SGD opt2({p}, {.lr = 0.1, .momentum = 0.9});
  optim::OneCycleLR both(opt2, {.max_lr = {0.1}, .total_steps = 10, .epochs = 3, .steps_per_epoch = 7});
  for (int i = 0; i < 10; ++i) both.step();
  EXPECT_TRUE(throws_with<Error>([&] { both.step(); }, "stepped 11 times but total_steps is 10"));
}

// Each group cycles to its own max_lr, from its own initial_lr = max_lr / div_factor; one value
// is every group's.
TEST(OneCycleLR, EachGroupCyclesToItsOwnMaxLr) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> lr(0.01, 2.0);
  const std::vector<double> max_lrs = {lr(rng), lr(rng), lr(rng)};
  optim::SGD opt({zeros({3}).set_requires_grad(true)}, {.lr = 0.1, .momentum = 0.9});
  opt.add_param_group({zeros({2}).set_requires_grad(true)}, 0.2);
  opt.add_param_group({zeros({4}).set_requires_grad(true)});
  optim::OneCycleLR sched(opt, {.max_lr = max_lrs, .total_steps = 40, .pct_start = 0.25, .three_phase = true});
  for (std::int64_t step = 0; step <= 40; ++step) {
    for (std::size_t g = 0; g < 3; ++g) {
      const Cycle c{.total = 40, .pct_start = 0.25, .max_lr = max_lrs[g], .three_phase = true};
      EXPECT_NEAR(sched.get_last_lr()[g], reference(step, c).first, 1e-12 * max_lrs[g]) << "group " << g;
      EXPECT_NEAR(opt.param_groups()[g].lr, reference(step, c).first, 1e-12 * max_lrs[g]) << "group " << g;
      EXPECT_EQ(*opt.param_groups()[g].initial_lr, max_lrs[g] / 25);
    }
    if (step < 40) sched.step();
  }
  optim::OneCycleLR shared(opt, {.max_lr = {0.5}, .total_steps = 40});
  for (double got : shared.get_last_lr()) EXPECT_NEAR(got, 0.5 / 25, 1e-15);
}

// Each group's momentum cycles between its own base_momentum and max_momentum (PyTorch's
// _format_param: one value per group, or one for all of them).
TEST(OneCycleLR, EachGroupCyclesItsOwnMomenta) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> lr(0.01, 2.0), low(0.5, 0.8), high(0.8, 0.99);
  const std::vector<double> max_lrs = {lr(rng), lr(rng), lr(rng)};
  const std::vector<double> base = {low(rng), low(rng), low(rng)}, peak = {high(rng), high(rng), high(rng)};
  for (bool three_phase : {false, true}) {
    SCOPED_TRACE(three_phase ? "three phases" : "two phases");
    optim::SGD opt({zeros({3}).set_requires_grad(true)}, {.lr = 0.1, .momentum = 0.9});
    opt.add_param_group({zeros({2}).set_requires_grad(true)});
    opt.add_param_group({zeros({4}).set_requires_grad(true)});
    optim::OneCycleLR sched(opt, {.max_lr = max_lrs,
                                  .total_steps = 30,
                                  .pct_start = 0.3,
                                  .base_momentum = base,
                                  .max_momentum = peak,
                                  .three_phase = three_phase});
    for (std::int64_t step = 0; step <= 30; ++step) {
      for (std::size_t g = 0; g < 3; ++g) {
        const Cycle c{.total = 30,
                      .pct_start = 0.3,
                      .max_lr = max_lrs[g],
                      .three_phase = three_phase,
                      .base_m = base[g],
                      .max_m = peak[g]};
        const auto [want_lr, want_momentum] = reference(step, c);
        EXPECT_NEAR(opt.param_groups()[g].lr, want_lr, 1e-12 * max_lrs[g]) << "group " << g << " step " << step;
        EXPECT_NEAR(*opt.param_groups()[g].momentum, want_momentum, 1e-12) << "group " << g << " step " << step;
      }
      if (step < 30) sched.step();
    }
  }
  optim::Adam adam({zeros({3}).set_requires_grad(true)}, {.lr = 1e-3});
  adam.add_param_group({zeros({2}).set_requires_grad(true)});
  optim::OneCycleLR shared(adam, {.max_lr = {0.5}, .total_steps = 20, .base_momentum = {0.7}, .max_momentum = {0.9}});
  for (int i = 0; i < 6; ++i) shared.step();
  const Cycle c{.total = 20, .pct_start = 0.3, .max_lr = 0.5, .base_m = 0.7, .max_m = 0.9};
  for (const auto& group : adam.param_groups()) EXPECT_NEAR(*group.momentum, reference(6, c).second, 1e-12);
}

// Options PyTorch refuses (and phases without a step, where PyTorch divides by zero) are errors
// that leave the optimiser as it was.
TEST(OneCycleLR, BadOptionsAreClearErrors) {
  optim::SGD opt({zeros({3}).set_requires_grad(true)}, {.lr = 0.1, .momentum = 0.9});
  opt.add_param_group({zeros({2}).set_requires_grad(true)});
  const std::vector<std::pair<optim::OneCycleLROptions, std::string>> cases = {
      {{.max_lr = {1.0}, .total_steps = 10, .anneal_strategy = "cosine"},
       "anneal_strategy must be \"cos\" or \"linear\", found \"cosine\""},
      {{.max_lr = {1.0}}, "give total_steps, or epochs and steps_per_epoch"},
      {{.max_lr = {1.0}, .epochs = 5}, "give total_steps, or epochs and steps_per_epoch"},
      {{.max_lr = {1.0}, .epochs = 0, .steps_per_epoch = 4}, "expected epochs > 0 and steps_per_epoch > 0, found 0"},
      {{.max_lr = {1.0}, .epochs = std::int64_t{1} << 40, .steps_per_epoch = std::int64_t{1} << 40}, "overflows int64"},
      {{.max_lr = {}, .total_steps = 10}, "one for each of the 2 parameter groups, found 0"},
      {{.max_lr = {1.0, 2.0, 3.0}, .total_steps = 10}, "one for each of the 2 parameter groups, found 3"},
      {{.max_lr = {1.0, -2.0}, .total_steps = 10}, "expected max_lr > 0, found -2"},
      {{.max_lr = {1.0}, .total_steps = 0}, "expected total_steps > 0, found 0"},
      {{.max_lr = {1.0}, .total_steps = 10, .pct_start = 1.5}, "expected pct_start in [0, 1], found 1.5"},
      {{.max_lr = {1.0}, .total_steps = 10, .pct_start = 0.1},
       "step 0 falls in phase 1 of 2, which starts and ends at step 0"},
      {{.max_lr = {1.0}, .total_steps = 10, .base_momentum = {0.8, 0.8, 0.8}},
       "expected one base_momentum, or one for each of the 2 parameter groups, found 3"},
      {{.max_lr = {1.0}, .total_steps = 10, .max_momentum = {}},
       "expected one max_momentum, or one for each of the 2 parameter groups, found 0"},
      {{.max_lr = {1.0}, .total_steps = 10, .base_momentum = {0.8, 1.0}}, "found 1 and 0.95 for parameter group 1"},
  };
  for (const auto& [options, message] : cases) {
    SCOPED_TRACE(message);
    EXPECT_TRUE(throws_with<Error>([&] { optim::OneCycleLR(opt, options); }, message));
    EXPECT_FALSE(opt.param_groups()[0].initial_lr.has_value());
    EXPECT_EQ(opt.param_groups()[1].lr, 0.1);
  }
  // As PyTorch's, the momenta are not read without cycle_momentum.
  EXPECT_NO_THROW(optim::OneCycleLR(
      opt, {.max_lr = {1.0}, .total_steps = 10, .cycle_momentum = false, .base_momentum = {0.8, 0.8, 0.8}}));
  // Two phases take the same pct_start: the second phase runs to the end.
  EXPECT_NO_THROW(optim::OneCycleLR(opt, {.max_lr = {1.0}, .total_steps = 100, .pct_start = 0.6}));
}

// What PyTorch accepts, hwaro follows step by step: a warm-up shorter than a step, a cycle of one
// step, pct_start 0, a second phase that ends after the cycle, a momentum that rises with the lr.
// With pct_start 1 the last phase has length 0, and PyTorch divides by zero at the step that
// reaches it: that step is refused and leaves the schedule as it was.
TEST(OneCycleLR, ShortAndUnusualCyclesFollowPyTorch) {
  const std::vector<Cycle> cycles = {
      {.total = 3, .pct_start = 0.3, .max_lr = 1.0},
      {.total = 1, .pct_start = 0.3, .max_lr = 0.5},
      {.total = 10, .pct_start = 0.0, .max_lr = 0.2, .linear = true},
      {.total = 100, .pct_start = 0.6, .max_lr = 1.0, .three_phase = true},
      {.total = 20, .pct_start = 0.25, .max_lr = 0.3, .base_m = 0.95, .max_m = 0.85},
  };
  for (const Cycle& c : cycles) {
    SCOPED_TRACE("total " + std::to_string(c.total) + " pct_start " + std::to_string(c.pct_start));
    optim::SGD opt({zeros({3}).set_requires_grad(true)}, {.lr = 0.1, .momentum = 0.9});
    optim::OneCycleLROptions options = options_of(c);
    options.base_momentum = {c.base_m};
    options.max_momentum = {c.max_m};
    optim::OneCycleLR sched(opt, options);
    const auto got = run_cycle(opt, sched, c.total);
    for (std::int64_t step = 0; step <= c.total; ++step) {
      const auto [lr, momentum] = reference(step, c);
      EXPECT_NEAR(got[static_cast<std::size_t>(step)].first, lr, 1e-12 * c.max_lr) << "step " << step;
      EXPECT_NEAR(got[static_cast<std::size_t>(step)].second, momentum, 1e-12) << "step " << step;
    }
  }
  const Cycle full_warmup{.total = 10, .pct_start = 1.0, .max_lr = 1.0};
  optim::SGD opt({zeros({3}).set_requires_grad(true)}, {.lr = 0.1, .momentum = 0.9});
  optim::OneCycleLR sched(opt, options_of(full_warmup));
  for (std::int64_t step = 1; step < full_warmup.total; ++step) sched.step();
  EXPECT_NEAR(opt.param_groups()[0].lr, reference(full_warmup.total - 1, full_warmup).first, 1e-12);
  EXPECT_TRUE(throws_with<Error>([&] { sched.step(); }, "step 10 falls in phase 2 of 2, which starts and ends at step 9"));
  EXPECT_EQ(sched.last_epoch(), full_warmup.total - 1);
  EXPECT_NEAR(opt.param_groups()[0].lr, 1.0, 1e-12);
}

}  // namespace
}  // namespace hwaro::test
