// A scheduler's state_dict holds last_epoch and base_lrs, as PyTorch's: a scheduler made before
// optimizer.load_state_dict (so from the fresh optimiser's lrs) resumes the saved run's lrs once
// it loads the saved state, checked against float64 formulas of torch.optim.lr_scheduler; a state
// without base_lrs (an older hwaro's) still loads; a state that does not fit changes nothing.
#include <cmath>
#include <functional>
#include <memory>
#include <numbers>

#include "hwaro/optim/lr_scheduler.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

using Make = std::function<std::unique_ptr<optim::LRScheduler>(optim::Optimizer&)>;
using Formula = std::function<double(double base_lr, std::int64_t epoch)>;

struct Schedule {
  std::string name;
  Make make;
  Formula lr;  // PyTorch's closed form, in float64
};

std::vector<Schedule> schedules() {
  return {
      {"StepLR", [](optim::Optimizer& o) { return std::make_unique<optim::StepLR>(o, 2, 0.5); },
       [](double base, std::int64_t e) { return base * std::pow(0.5, std::floor(static_cast<double>(e) / 2)); }},
      {"CosineAnnealingLR", [](optim::Optimizer& o) { return std::make_unique<optim::CosineAnnealingLR>(o, 8, 0.01); },
       [](double base, std::int64_t e) {
         return 0.01 + (base - 0.01) * (1 + std::cos(std::numbers::pi * static_cast<double>(e) / 8)) / 2;
       }},
  };
}

// SGD with two groups of the given lrs.
std::unique_ptr<optim::SGD> make_sgd(double lr0, double lr1) {
  auto opt = std::make_unique<optim::SGD>(std::vector<Tensor>{zeros({3}).set_requires_grad(true)},
                                          optim::SGDOptions{.lr = lr0, .momentum = 0.9});
  opt->add_param_group({zeros({2}).set_requires_grad(true)}, lr1);
  return opt;
}

void expect_lrs(const optim::LRScheduler& sched, const optim::Optimizer& opt, const Formula& lr,
                const std::vector<double>& base_lrs) {
  for (std::size_t g = 0; g < base_lrs.size(); ++g) {
    const double want = lr(base_lrs[g], sched.last_epoch());
    EXPECT_NEAR(sched.get_last_lr()[g], want, 1e-15) << "group " << g << " epoch " << sched.last_epoch();
    EXPECT_NEAR(opt.param_groups()[g].lr, want, 1e-15) << "group " << g << " epoch " << sched.last_epoch();
  }
}

// The fresh optimiser is made with other lrs (say a placeholder), so its scheduler's base lrs are
// not the run's until load_state_dict brings the saved ones.
TEST(LRSchedulerState, ASchedulerMadeBeforeLoadingTheOptimiserResumesTheUninterruptedLrs) {
  for (const auto& [name, make, lr] : schedules()) {
    SCOPED_TRACE(name);
    auto straight = make_sgd(0.1, 0.4);
    auto sched = make(*straight);
    for (int i = 0; i < 3; ++i) sched->step();
    const auto opt_state = straight->state_dict();
    const auto sched_state = sched->state_dict();
    EXPECT_EQ(sched_state.at("base_lrs.0").item<double>(), 0.1);
    EXPECT_EQ(sched_state.at("base_lrs.1").item<double>(), 0.4);
    EXPECT_EQ(sched_state.at("base_lrs.1").dtype(), kFloat64);

    auto resumed = make_sgd(0.7, 0.9);
    auto resumed_sched = make(*resumed);
    resumed->load_state_dict(opt_state);
    resumed_sched->load_state_dict(sched_state);
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(resumed_sched->last_epoch(), 3 + i);
      expect_lrs(*resumed_sched, *resumed, lr, {0.1, 0.4});
      EXPECT_EQ(resumed_sched->get_last_lr(), sched->get_last_lr());
      sched->step();
      resumed_sched->step();
    }
  }
}

// A state saved by an older hwaro holds last_epoch alone: the scheduler keeps its own base lrs.
TEST(LRSchedulerState, AStateWithoutBaseLrsStillLoads) {
  for (const auto& [name, make, lr] : schedules()) {
    SCOPED_TRACE(name);
    auto opt = make_sgd(0.3, 0.6);
    auto sched = make(*opt);
    sched->load_state_dict({{"last_epoch", scalar_tensor(5.0, {.dtype = kFloat64})}});
    EXPECT_EQ(sched->last_epoch(), 5);
    expect_lrs(*sched, *opt, lr, {0.3, 0.6});
    EXPECT_EQ(sched->state_dict().at("base_lrs.1").item<double>(), 0.6);
  }
}

// base_lrs that do not fit the optimiser's groups, or are not lrs, are refused; so is an epoch
// the schedule refuses. Each refusal leaves the scheduler and the optimiser as they were.
TEST(LRSchedulerState, AStateThatDoesNotFitIsAClearErrorThatChangesNothing) {
  const auto f64 = [](double v) { return scalar_tensor(v, {.dtype = kFloat64}); };
  const auto epoch = f64(2.0);
  const std::vector<std::pair<std::map<std::string, Tensor>, std::string>> cases = {
      {{{"last_epoch", epoch}, {"base_lrs.0", f64(0.2)}}, "base_lrs for 1 parameter groups but the optimiser has 2"},
      {{{"last_epoch", epoch}, {"base_lrs.0", f64(0.2)}, {"base_lrs.1", f64(0.2)}, {"base_lrs.2", f64(0.2)}},
       "base_lrs for 3 parameter groups but the optimiser has 2"},
      {{{"last_epoch", epoch}, {"base_lrs.0", f64(0.2)}, {"base_lrs.2", f64(0.2)}}, "has no base_lrs.1"},
      {{{"last_epoch", epoch}, {"base_lrs.0", f64(0.2)}, {"base_lrs.01", f64(0.2)}}, "malformed key 'base_lrs.01'"},
      {{{"last_epoch", epoch}, {"base_lrs.x", f64(0.2)}}, "malformed key 'base_lrs.x'"},
      {{{"last_epoch", epoch}, {"base_lrs.0", f64(-0.2)}, {"base_lrs.1", f64(0.2)}}, "must be a finite lr >= 0"},
      {{{"last_epoch", epoch}, {"base_lrs.0", f64(NAN)}, {"base_lrs.1", f64(0.2)}}, "must be a finite lr >= 0"},
      {{{"last_epoch", epoch}, {"base_lrs.0", zeros({2})}, {"base_lrs.1", f64(0.2)}}, "must hold one value"},
  };
  auto opt = make_sgd(0.3, 0.6);
  optim::StepLR sched(*opt, 2, 0.5);
  sched.step();
  const auto before = sched.state_dict();
  for (const auto& [state, message] : cases) {
    SCOPED_TRACE(message);
    EXPECT_TRUE(throws_with<Error>([&] { sched.load_state_dict(state); }, message));
    const auto now = sched.state_dict();
    ASSERT_EQ(now.size(), before.size());
    for (const auto& [key, t] : before) EXPECT_EQ(now.at(key).item<double>(), t.item<double>()) << key;
    EXPECT_EQ(opt->param_groups()[0].lr, 0.3);
    EXPECT_EQ(opt->param_groups()[1].lr, 0.6);
  }

  // The epoch is checked after the base lrs are taken: a refused one puts the old ones back.
  optim::SGD sgd({zeros({3}).set_requires_grad(true)}, {.lr = 0.1, .momentum = 0.9});
  optim::OneCycleLR cycle(sgd, /*max_lr=*/1.0, /*total_steps=*/10);
  EXPECT_THROW(cycle.load_state_dict({{"last_epoch", f64(11.0)}, {"base_lrs.0", f64(0.5)}}), Error);
  EXPECT_EQ(cycle.state_dict().at("base_lrs.0").item<double>(), 1.0 / 25);
  EXPECT_EQ(cycle.last_epoch(), 0);
}

}  // namespace
}  // namespace hwaro::test
