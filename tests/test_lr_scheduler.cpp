// Learning-rate schedulers against the values of torch.optim.lr_scheduler's formulas
// (worked out by hand in float64), their checkpoint round trip, and clip_grad_norm_
// against a float64 norm of fresh random gradients.
#include <cmath>
#include <functional>
#include <memory>
#include <numbers>

#include "hwaro/nn/utils.h"
#include "hwaro/optim/lr_scheduler.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

std::vector<double> lrs_over(optim::LRScheduler& sched, optim::Optimizer& opt, int steps) {
  std::vector<double> lrs;
  for (int i = 0; i < steps; ++i) {
    lrs.push_back(opt.param_groups()[0].lr);
    sched.step();
  }
  return lrs;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "step " << i;
}

TEST(LRScheduler, StepLRDecaysEveryStepSize) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 0.1});
  optim::StepLR sched(opt, /*step_size=*/2, /*gamma=*/0.5);
  expect_near_all(lrs_over(sched, opt, 6), {0.1, 0.1, 0.05, 0.05, 0.025, 0.025});
}

TEST(LRScheduler, CosineAnnealingReachesEtaMinAtTMax) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 1.0});
  optim::CosineAnnealingLR sched(opt, /*T_max=*/4);
  expect_near_all(lrs_over(sched, opt, 5), {1.0, 0.8535533905932737, 0.5, 0.14644660940672627, 0.0});
}

TEST(LRScheduler, OneCycleWarmsUpThenAnneals) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::Adam opt({p}, {.lr = 1e-3});
  optim::OneCycleLR sched(opt, /*max_lr=*/1.0, /*total_steps=*/10);
  std::vector<double> lrs;
  for (int i = 0; i < 10; ++i) {
    lrs.push_back(opt.param_groups()[0].lr);
    if (i < 9) sched.step();
  }
  expect_near_all(lrs, {0.04, 0.52, 1.0, 0.9504846320134737, 0.8117456539497631, 0.6112620219362893,
                        0.38874197806371075, 0.18825834605023697, 0.049519367986526286, 4e-06});
  sched.step();                       // the last step of a loop of total_steps: PyTorch allows it
  EXPECT_THROW(sched.step(), Error);  // past total_steps
}

// PyTorch's OneCycleLR (two phases, cos) in float64: the warm-up ends at pct_start * total - 1,
// the annealing at total - 1; get_lr refuses only last_epoch > total_steps, so the last epoch of
// `for (total_steps) { opt.step(); sched.step(); }` (last_epoch == total_steps) extrapolates the
// annealing phase (pct > 1). The value (lr or momentum) goes from `start` to `peak` in the
// warm-up, then towards `end`.
double one_cycle_reference(std::int64_t epoch, std::int64_t total, double pct_start, double start, double peak,
                           double end) {
  const auto cos_anneal = [](double from, double to, double pct) {
    return to + (from - to) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  };
  const double warm_end = pct_start * static_cast<double>(total) - 1, last = static_cast<double>(total) - 1;
  const double e = static_cast<double>(epoch);
  if (e <= warm_end) return cos_anneal(start, peak, e / warm_end);
  return cos_anneal(peak, end, (e - warm_end) / (last - warm_end));
}

TEST(LRScheduler, OneCycleTakesTotalStepsStepsAsPyTorchsDoes) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 5; ++trial) {
    const std::int64_t total = std::uniform_int_distribution<std::int64_t>(10, 300)(rng);
    const double pct_start = std::uniform_real_distribution<double>(0.15, 0.85)(rng);
    const double max_lr = std::uniform_real_distribution<double>(0.01, 2.0)(rng);
    const double div = 25, final_div = 1e4;
    Tensor p = zeros({3}).set_requires_grad(true);
    optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
    optim::OneCycleLR sched(opt, max_lr, total, pct_start, div, final_div);
    const double initial = max_lr / div, min_lr = initial / final_div;
    for (std::int64_t step = 0; step < total; ++step) {
      ASSERT_NO_THROW(sched.step()) << "step " << step + 1 << " of " << total;
      const std::int64_t e = sched.last_epoch();
      EXPECT_NEAR(opt.param_groups()[0].lr, one_cycle_reference(e, total, pct_start, initial, max_lr, min_lr),
                  1e-12 * max_lr)
          << "epoch " << e;
      EXPECT_NEAR(*opt.param_groups()[0].momentum, one_cycle_reference(e, total, pct_start, 0.95, 0.85, 0.95), 1e-12)
          << "epoch " << e;
    }
    EXPECT_EQ(sched.last_epoch(), total);
    EXPECT_TRUE(throws_with<Error>([&] { sched.step(); }, "stepped " + std::to_string(total + 1) +
                                                              " times but total_steps is " + std::to_string(total)));
  }
}

// A step past total_steps, or a loaded epoch past it, is refused and leaves the schedule where it
// was: last_epoch (and so the next state_dict), the lr and the momentum.
TEST(LRScheduler, ARefusedOneCycleStepOrLoadChangesNothing) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::Adam opt({p}, {.lr = 1e-3});
  optim::OneCycleLR sched(opt, /*max_lr=*/0.5, /*total_steps=*/12);
  for (int i = 0; i < 12; ++i) sched.step();
  const double lr = opt.param_groups()[0].lr, beta1 = *opt.param_groups()[0].momentum;
  for (int attempt = 0; attempt < 2; ++attempt) {
    EXPECT_THROW(sched.step(), Error);
    EXPECT_EQ(sched.last_epoch(), 12);
    EXPECT_EQ(sched.state_dict().at("last_epoch").item<double>(), 12.0);
    EXPECT_EQ(opt.param_groups()[0].lr, lr);
    EXPECT_EQ(sched.get_last_lr(), std::vector<double>{lr});
    EXPECT_EQ(*opt.param_groups()[0].momentum, beta1);
  }
  EXPECT_THROW(sched.load_state_dict({{"last_epoch", scalar_tensor(15.0, {.dtype = kFloat64})}}), Error);
  EXPECT_EQ(sched.last_epoch(), 12);
  EXPECT_EQ(opt.param_groups()[0].lr, lr);
}

// PyTorch's cycle_momentum: the momentum moves against the lr, 0.95 -> 0.85 during the warm-up,
// then back to 0.95 (values from torch.optim.lr_scheduler.OneCycleLR's formula, worked in float64).
TEST(LRScheduler, OneCycleCyclesMomentumAgainstTheLr) {
  const std::vector<double> want = {0.95, 0.9, 0.85, 0.854951556604879, 0.8688255099070633, 0.8888739533021842,
                                    0.9111260466978157, 0.9311744900929366, 0.945048443395121, 0.95};
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::Adam adam({p}, {.lr = 1e-3});
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  optim::OneCycleLR adam_sched(adam, 1.0, 10);
  optim::OneCycleLR sgd_sched(sgd, 1.0, 10);
  std::vector<double> beta1s, momenta;
  for (int i = 0; i < 10; ++i) {
    beta1s.push_back(*adam.param_groups()[0].momentum);
    momenta.push_back(*sgd.param_groups()[0].momentum);
    if (i < 9) {
      adam_sched.step();
      sgd_sched.step();
    }
  }
  expect_near_all(beta1s, want);
  expect_near_all(momenta, want);
  // Without cycling the momentum stays as given.
  optim::SGD still({p}, {.lr = 0.1, .momentum = 0.5});
  optim::OneCycleLR no_cycle(still, 1.0, 10, 0.3, 25, 1e4, /*cycle_momentum=*/false);
  no_cycle.step();
  EXPECT_EQ(*still.param_groups()[0].momentum, 0.5);
}

// An optimiser with no momentum or beta1 cannot have it cycled: PyTorch's error.
TEST(LRScheduler, OneCycleRefusesToCycleAMomentumTheOptimiserLacks) {
  struct Plain : optim::Optimizer {
    explicit Plain(std::vector<Tensor> params) : Optimizer(std::move(params), 0.1, "Plain") {}
    void step() override {}
  };
  Plain plain({zeros({2}).set_requires_grad(true)});
  EXPECT_TRUE(throws_with<Error>([&] { optim::OneCycleLR(plain, 1.0, 10); }, "must support momentum or beta1"));
  EXPECT_NO_THROW(optim::OneCycleLR(plain, 1.0, 10, 0.3, 25, 1e4, /*cycle_momentum=*/false));
}

TEST(LRScheduler, StateDictRestoresTheSchedule) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 1.0});
  optim::CosineAnnealingLR sched(opt, 10);
  for (int i = 0; i < 3; ++i) sched.step();
  const auto state = sched.state_dict();

  Tensor q = zeros({3}).set_requires_grad(true);
  optim::SGD opt2({q}, {.lr = 1.0});
  optim::CosineAnnealingLR resumed(opt2, 10);
  resumed.load_state_dict(state);
  EXPECT_EQ(resumed.last_epoch(), 3);
  EXPECT_DOUBLE_EQ(opt2.param_groups()[0].lr, opt.param_groups()[0].lr);
  EXPECT_THROW(resumed.load_state_dict({}), Error);
  // Values a double holds but an int64 epoch does not are refused, not converted (undefined).
  for (const double bad : {-1.0, 2.5, 1e300, static_cast<double>(INFINITY), static_cast<double>(NAN)}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(throws_with<Error>([&] { resumed.load_state_dict({{"last_epoch", scalar_tensor(bad, {.dtype = kFloat64})}}); },
                                   "expected last_epoch to be a non-negative integer below 2^53"));
  }
  EXPECT_EQ(resumed.last_epoch(), 3);
}

// PyTorch's initial_lr: the first scheduler records each group's starting lr in the optimiser,
// which saves it, and a scheduler made after load_state_dict takes its base lrs from there. Taken
// from the loaded (already decayed) lr, the resumed schedule would decay it a second time.
TEST(LRScheduler, ASchedulerMadeAfterLoadingTheOptimiserResumesTheUninterruptedLrs) {
  using Make = std::function<std::unique_ptr<optim::LRScheduler>(optim::Optimizer&)>;
  const std::vector<std::pair<std::string, Make>> schedules = {
      {"StepLR", [](optim::Optimizer& o) { return std::make_unique<optim::StepLR>(o, 2, 0.5); }},
      {"CosineAnnealingLR", [](optim::Optimizer& o) { return std::make_unique<optim::CosineAnnealingLR>(o, 8, 0.01); }},
  };
  const auto make_sgd = [] {
    auto opt = std::make_unique<optim::SGD>(std::vector<Tensor>{zeros({3}).set_requires_grad(true)},
                                            optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
    opt->add_param_group({zeros({2}).set_requires_grad(true)}, 0.4);
    return opt;
  };
  for (const auto& [name, make] : schedules) {
    SCOPED_TRACE(name);
    auto straight = make_sgd();
    EXPECT_EQ(straight->state_dict().count("param_groups.0.initial_lr"), 0U) << "saved only once set";
    auto sched = make(*straight);
    for (int i = 0; i < 3; ++i) sched->step();
    const auto opt_state = straight->state_dict();
    EXPECT_EQ(opt_state.at("param_groups.0.initial_lr").item<double>(), 0.1);
    EXPECT_EQ(opt_state.at("param_groups.1.initial_lr").item<double>(), 0.4);

    auto resumed = make_sgd();
    resumed->load_state_dict(opt_state);
    auto resumed_sched = make(*resumed);
    resumed_sched->load_state_dict(sched->state_dict());
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(resumed_sched->get_last_lr(), sched->get_last_lr()) << "epoch " << sched->last_epoch();
      EXPECT_EQ(resumed->param_groups()[1].lr, straight->param_groups()[1].lr);
      sched->step();
      resumed_sched->step();
    }
  }
}

// A state saved before any scheduler (or by an older hwaro) has no initial_lr: it loads, the
// groups' initial_lr is cleared as the state replaces the optimiser's, and a scheduler made then
// starts from the loaded lr. A second scheduler on one optimiser keeps the first one's initial_lr
// (setdefault); OneCycleLR replaces it with max_lr / div_factor, as PyTorch's.
TEST(LRScheduler, InitialLrIsSetOnceAndAStateWithoutItStillLoads) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 0.3, .momentum = 0.9});
  optim::StepLR first(opt, 1, 0.5);
  first.step();
  EXPECT_EQ(opt.param_groups()[0].lr, 0.15);
  optim::StepLR second(opt, 1, 0.1);
  EXPECT_EQ(second.get_last_lr(), std::vector<double>{0.3});
  auto state = opt.state_dict();
  ASSERT_EQ(state.erase("param_groups.0.initial_lr"), 1U);
  state.at("param_groups.0.lr") = scalar_tensor(0.2, {.dtype = kFloat64});
  opt.load_state_dict(state);
  EXPECT_FALSE(opt.param_groups()[0].initial_lr.has_value());
  optim::StepLR after(opt, 1, 0.5);
  EXPECT_EQ(*opt.param_groups()[0].initial_lr, 0.2);
  after.step();
  EXPECT_EQ(after.get_last_lr(), std::vector<double>{0.1});
  optim::OneCycleLR cycle(opt, /*max_lr=*/2.0, /*total_steps=*/10, 0.3, /*div_factor=*/4);
  EXPECT_EQ(*opt.param_groups()[0].initial_lr, 0.5);
  EXPECT_EQ(opt.state_dict().at("param_groups.0.initial_lr").item<double>(), 0.5);
}

TEST(LRScheduler, BadArgumentsAreErrors) {
  Tensor p = zeros({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 1.0});
  EXPECT_THROW(optim::StepLR(opt, 0), Error);
  EXPECT_THROW(optim::CosineAnnealingLR(opt, 0), Error);
  EXPECT_THROW(optim::OneCycleLR(opt, 1.0, 0), Error);
}

// Float64 reference of the joint p-norm of all gradients.
double reference_norm(const std::vector<std::vector<double>>& grads, double p) {
  double acc = 0;
  for (const auto& g : grads)
    for (double v : g) acc = std::isinf(p) ? std::max(acc, std::abs(v)) : acc + std::pow(std::abs(v), p);
  return std::isinf(p) ? acc : std::pow(acc, 1 / p);
}

TEST(ClipGradNorm, ScalesToMaxNormAndReturnsTheNormBefore) {
  std::mt19937_64 rng(fresh_seed());
  for (double p_norm : {2.0, 1.0, static_cast<double>(INFINITY)}) {
    std::vector<Tensor> params;
    std::vector<std::vector<double>> grads;
    for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{{4, 5}, {7}}) {
      Tensor w = zeros(shape).set_requires_grad(true);
      w.mutable_grad() = random_tensor(shape, kFloat32, rng);
      grads.push_back(values_of(w.grad()));
      params.push_back(w);
    }
    params.push_back(zeros({2}).set_requires_grad(true));  // no gradient: skipped
    const double want = reference_norm(grads, p_norm);
    const double max_norm = want / 3;
    EXPECT_NEAR(nn::utils::clip_grad_norm_(params, max_norm, p_norm), want, 1e-5 * want);
    std::vector<std::vector<double>> after = {values_of(params[0].grad()), values_of(params[1].grad())};
    EXPECT_NEAR(reference_norm(after, p_norm), max_norm, 1e-4 * max_norm) << "norm " << p_norm;
    // Under the limit nothing changes.
    EXPECT_NEAR(nn::utils::clip_grad_norm_(params, 10 * want, p_norm), max_norm, 1e-4 * max_norm);
    EXPECT_EQ(values_of(params[0].grad()), after[0]);
  }
  EXPECT_THROW(nn::utils::clip_grad_norm_({}, -1.0), Error);
}

// A NaN anywhere in the gradients makes the total norm NaN for every norm_type, as
// torch.linalg.vector_norm's (the max of the inf norm propagates it), and, as PyTorch's
// clip_grad_norm_, the clip coefficient clamp(max_norm / (NaN + 1e-6), max=1) is NaN and scales
// every gradient by it.
TEST(ClipGradNorm, ANanGradientGivesANanNormForEveryNormType) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double p_norm : {2.0, 1.0, 3.0, static_cast<double>(INFINITY)}) {
    SCOPED_TRACE(p_norm);
    std::vector<Tensor> params;
    for (int k = 0; k < 3; ++k) {
      Tensor w = zeros({6}).set_requires_grad(true);
      w.mutable_grad() = random_tensor({6}, kFloat32, rng);
      params.push_back(w);
    }
    // The NaN in the second or third tensor, once the running norm holds a finite value.
    const auto where = std::uniform_int_distribution<std::int64_t>(0, 5)(rng);
    params[std::uniform_int_distribution<int>(1, 2)(rng)].mutable_grad()[where].fill_(std::nan(""));
    EXPECT_TRUE(std::isnan(nn::utils::clip_grad_norm_(params, 1.0, p_norm)));
    for (const Tensor& w : params) {
      for (double v : values_of(w.grad())) EXPECT_TRUE(std::isnan(v));
    }
  }
}

// error_if_nonfinite (PyTorch's option): a NaN or infinite total norm throws and leaves every
// gradient as it was; a finite one clips as without it.
TEST(ClipGradNorm, ErrorIfNonfiniteRefusesANonFiniteNormAndChangesNothing) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double bad : {std::nan(""), static_cast<double>(INFINITY), -static_cast<double>(INFINITY)}) {
    for (double p_norm : {2.0, static_cast<double>(INFINITY)}) {
      SCOPED_TRACE(std::to_string(bad) + " norm " + std::to_string(p_norm));
      std::vector<Tensor> params;
      for (int k = 0; k < 2; ++k) {
        Tensor w = zeros({5}).set_requires_grad(true);
        w.mutable_grad() = random_tensor({5}, kFloat32, rng);
        params.push_back(w);
      }
      params[1].mutable_grad()[std::uniform_int_distribution<std::int64_t>(0, 4)(rng)].fill_(bad);
      const std::vector<double> g0 = values_of(params[0].grad()), g1 = values_of(params[1].grad());
      EXPECT_TRUE(throws_with<Error>([&] { nn::utils::clip_grad_norm_(params, 1.0, p_norm, true); },
                                     "clip_grad_norm_: the total norm of order"));
      EXPECT_EQ(values_of(params[0].grad()), g0);
      EXPECT_TRUE(all_close(values_of(params[1].grad()), g1, 0, 0));  // NaN equal to NaN
    }
  }
  Tensor w = zeros({4}).set_requires_grad(true);
  w.mutable_grad() = random_tensor({4}, kFloat32, rng, 1, 2);
  const double want = reference_norm({values_of(w.grad())}, 2.0);
  EXPECT_NEAR(nn::utils::clip_grad_norm_({w}, want / 2, 2.0, true), want, 1e-6 * want);
  EXPECT_NEAR(reference_norm({values_of(w.grad())}, 2.0), want / 2, 1e-5 * want);
}

}  // namespace
}  // namespace hwaro::test
