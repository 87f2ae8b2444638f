// SequentialLR (torch.optim.lr_scheduler.SequentialLR): a warm-up then cosine annealing, and three
// schedulers, against their float64 formulas for two parameter groups over 25 epochs; resuming
// from its state_dict mid-run; OneCycleLR's momentum through it; PyTorch's argument checks.
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "support/scheduler_fixtures.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

// LinearLR(0.1 -> 1 over 5 epochs) until epoch 5, then CosineAnnealingLR(T_max 10, eta_min 0.01)
// from its own epoch 0 there: PyTorch's SequentialLR steps the new scheduler with step(0) at the
// milestone.
double warmup_cosine(double base, std::int64_t epoch) {
  if (epoch < 5) return base * (0.1 + 0.9 * static_cast<double>(epoch) / 5.0);
  const double e = static_cast<double>(epoch - 5);
  return 0.01 + (base - 0.01) * (1 + std::cos(std::numbers::pi * e / 10.0)) / 2;
}

std::unique_ptr<optim::SequentialLR> make_warmup_cosine(optim::Optimizer& opt) {
  auto warmup = std::make_shared<optim::LinearLR>(opt, 0.1, 1.0, 5);
  auto cosine = std::make_shared<optim::CosineAnnealingLR>(opt, 10, 0.01);
  return std::make_unique<optim::SequentialLR>(opt, std::vector<std::shared_ptr<optim::LRScheduler>>{warmup, cosine},
                                               std::vector<std::int64_t>{5});
}

TEST(SequentialLR, AWarmUpThenCosineFollowsBothFormulas) {
  auto opt = make_two_group_sgd(1.0, 0.3);
  auto sched = make_warmup_cosine(*opt);
  for (std::int64_t epoch = 0; epoch <= 25; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    EXPECT_EQ(sched->last_epoch(), epoch);
    EXPECT_NEAR(opt->param_groups()[0].lr, warmup_cosine(1.0, epoch), 1e-15);
    EXPECT_NEAR(opt->param_groups()[1].lr, warmup_cosine(0.3, epoch), 1e-15);
    EXPECT_EQ(sched->get_last_lr(), (std::vector<double>{opt->param_groups()[0].lr, opt->param_groups()[1].lr}));
    sched->step();
  }
}

TEST(SequentialLR, ThreeSchedulersEachStartFromTheirOwnEpochZero) {
  auto opt = make_two_group_sgd(0.5, 0.2);
  auto constant = std::make_shared<optim::LinearLR>(*opt, 0.5, 0.5, 1);  // half the base lr throughout
  auto step = std::make_shared<optim::StepLR>(*opt, 2, 0.1);
  auto exponential = std::make_shared<optim::ExponentialLR>(*opt, 0.9);
  optim::SequentialLR sched(*opt, {constant, step, exponential}, {3, 7});
  for (std::int64_t epoch = 0; epoch <= 12; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    for (std::size_t g = 0; g < 2; ++g) {
      const double base = g == 0 ? 0.5 : 0.2;
      double want = base * 0.5;
      if (epoch >= 7) {
        want = base * std::pow(0.9, static_cast<double>(epoch - 7));
      } else if (epoch >= 3) {
        want = base * std::pow(0.1, static_cast<double>((epoch - 3) / 2));
      }
      EXPECT_NEAR(opt->param_groups()[g].lr, want, 1e-15) << "group " << g;
    }
    sched.step();
  }
}

TEST(SequentialLR, ResumesFromItsStateDictMidRun) {
  auto straight_opt = make_two_group_sgd(1.0, 0.3);
  auto straight = make_warmup_cosine(*straight_opt);
  for (int i = 0; i < 7; ++i) straight->step();
  const auto opt_state = straight_opt->state_dict();
  const auto state = straight->state_dict();

  // A new run, made as the first, then loaded: the schedulers are made before the optimiser's
  // load, so their base lrs are the fresh optimiser's (2.0, 0.6) until the state's come back.
  auto resumed_opt = make_two_group_sgd(2.0, 0.6);
  auto resumed = make_warmup_cosine(*resumed_opt);
  resumed_opt->load_state_dict(opt_state);
  resumed->load_state_dict(state);
  for (int i = 0; i < 12; ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(resumed->last_epoch(), straight->last_epoch());
    EXPECT_EQ(resumed_opt->param_groups()[0].lr, straight_opt->param_groups()[0].lr);
    EXPECT_EQ(resumed_opt->param_groups()[1].lr, straight_opt->param_groups()[1].lr);
    straight->step();
    resumed->step();
  }
  EXPECT_NEAR(straight_opt->param_groups()[1].lr, warmup_cosine(0.3, 19), 1e-15);
}

TEST(SequentialLR, PassesOneCycleLRsMomentumOn) {
  auto opt = make_two_group_sgd(0.1, 0.1);
  auto hold = std::make_shared<optim::LinearLR>(*opt, 1.0, 1.0, 1);
  auto cycle = std::make_shared<optim::OneCycleLR>(*opt, optim::OneCycleLROptions{.max_lr = {1.0}, .total_steps = 10});
  optim::SequentialLR sched(*opt, {hold, cycle}, {2});
  sched.step();
  EXPECT_EQ(opt->param_groups()[0].lr, 0.1);
  sched.step();  // epoch 2: the cycle's epoch 0, lr max_lr / div_factor and momentum max_momentum
  EXPECT_NEAR(opt->param_groups()[0].lr, 1.0 / 25, 1e-15);
  EXPECT_NEAR(*opt->param_groups()[0].momentum, 0.95, 1e-15);
  sched.step();
  EXPECT_LT(*opt->param_groups()[0].momentum, 0.95);
}

TEST(SequentialLR, BadArgumentsAreClearErrors) {
  auto opt = make_two_group_sgd(1.0, 0.3);
  auto other = make_two_group_sgd(1.0, 0.3);
  auto a = std::make_shared<optim::StepLR>(*opt, 2);
  auto b = std::make_shared<optim::ExponentialLR>(*opt, 0.9);
  auto elsewhere = std::make_shared<optim::ExponentialLR>(*other, 0.9);
  using List = std::vector<std::shared_ptr<optim::LRScheduler>>;
  EXPECT_TRUE(throws_with<Error>([&] { optim::SequentialLR(*opt, List{a, b}, {}); },
                                 "expected one more scheduler than milestones, but got 2 schedulers and 0 milestones"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SequentialLR(*opt, List{}, {}); }, "at least one scheduler"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SequentialLR(*opt, List{a, elsewhere}, {3}); },
                                 "scheduler 1 was made for another one"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SequentialLR(*opt, List{a, b, a}, {4, 4}); },
                                 "expected increasing positive milestones, but milestone 1 is 4"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SequentialLR(*opt, List{a, b}, {0}); }, "milestone 0 is 0"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SequentialLR(*opt, List{a, nullptr}, {2}); }, "scheduler 1 is empty"));
}

}  // namespace
}  // namespace hwaro::test
