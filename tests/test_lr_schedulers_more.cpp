// MultiStepLR, ExponentialLR, LinearLR, LambdaLR and ReduceLROnPlateau against
// torch.optim.lr_scheduler: the closed-form ones over 25 epochs against their formulas written
// out here in float64, with two parameter groups; ReduceLROnPlateau against tables worked out by
// hand from PyTorch's rule; each resumed mid-run from its state_dict, ReduceLROnPlateau also
// through a training checkpoint; and the arguments PyTorch (or hwaro) refuses.
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include "hwaro/checkpoint.h"
#include "hwaro/optim/lr_scheduler.h"
#include "hwaro/optim/reduce_lr_on_plateau.h"
#include "serialize_test_files.h"
#include "support/scheduler_fixtures.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kEpochs = 25;

using Make = std::function<std::unique_ptr<optim::LRScheduler>(optim::Optimizer&)>;
using Formula = std::function<double(std::size_t group, double base_lr, std::int64_t epoch)>;

struct ClosedFormSchedule {
  std::string name;
  Make make;
  Formula lr;  // PyTorch's closed form, written out independently in float64
};

// A factor taken `times` times, by repeated multiplication rather than pow.
double power(double factor, std::int64_t times) {
  double out = 1;
  for (std::int64_t i = 0; i < times; ++i) out *= factor;
  return out;
}

std::vector<ClosedFormSchedule> closed_form_schedules() {
  return {
      {"MultiStepLR", [](optim::Optimizer& o) { return std::make_unique<optim::MultiStepLR>(o, std::vector<std::int64_t>{12, 3, 7, 7}, 0.5); },
       [](std::size_t, double base, std::int64_t e) {
         double lr = base;
         for (std::int64_t milestone : {3, 7, 7, 12}) {
           if (milestone <= e) lr *= 0.5;  // reached at the milestone itself; 7 counts twice
         }
         return lr;
       }},
      {"ExponentialLR", [](optim::Optimizer& o) { return std::make_unique<optim::ExponentialLR>(o, 0.9); },
       [](std::size_t, double base, std::int64_t e) { return base * power(0.9, e); }},
      {"LinearLR defaults", [](optim::Optimizer& o) { return std::make_unique<optim::LinearLR>(o); },
       [](std::size_t, double base, std::int64_t e) {
         const double t = static_cast<double>(std::min<std::int64_t>(e, 5)) / 5;  // 1/3 up to 1 over 5 epochs
         return base * (1.0 / 3 * (1 - t) + 1.0 * t);
       }},
      {"LinearLR decaying", [](optim::Optimizer& o) { return std::make_unique<optim::LinearLR>(o, 0.8, 0.1, 8); },
       [](std::size_t, double base, std::int64_t e) {
         const double t = static_cast<double>(std::min<std::int64_t>(e, 8)) / 8;
         return base * (0.8 * (1 - t) + 0.1 * t);
       }},
      {"LambdaLR one for all", [](optim::Optimizer& o) {
         return std::make_unique<optim::LambdaLR>(o, [](std::int64_t e) { return 1.0 / static_cast<double>(1 + e / 4); });
       },
       [](std::size_t, double base, std::int64_t e) { return base / std::floor(1 + static_cast<double>(e) / 4); }},
      {"LambdaLR per group", [](optim::Optimizer& o) {
         return std::make_unique<optim::LambdaLR>(
             o, std::vector<optim::LambdaLR::LrLambda>{[](std::int64_t e) { return std::pow(0.95, static_cast<double>(e)); },
                                                        [](std::int64_t e) { return e < 10 ? 1.0 + static_cast<double>(e) : 0.5; }});
       },
       [](std::size_t group, double base, std::int64_t e) {
         if (group == 0) return base * power(0.95, e);
         return base * (e < 10 ? static_cast<double>(e + 1) : 0.5);
       }},
  };
}

void expect_lrs(const optim::LRScheduler& sched, const optim::Optimizer& opt, const Formula& lr,
                const std::vector<double>& base_lrs) {
  const std::int64_t epoch = sched.last_epoch();
  for (std::size_t g = 0; g < base_lrs.size(); ++g) {
    const double want = lr(g, base_lrs[g], epoch);
    EXPECT_NEAR(sched.get_last_lr()[g], want, 1e-14 * std::abs(want)) << "group " << g << " epoch " << epoch;
    EXPECT_NEAR(opt.param_groups()[g].lr, want, 1e-14 * std::abs(want)) << "group " << g << " epoch " << epoch;
  }
}

TEST(MoreLRSchedulers, EachFollowsItsFormulaForTwoGroupsOver25Epochs) {
  for (const auto& [name, make, lr] : closed_form_schedules()) {
    SCOPED_TRACE(name);
    auto opt = make_two_group_sgd(0.1, 0.4);
    auto sched = make(*opt);
    for (int e = 0; e <= kEpochs; ++e) {
      ASSERT_EQ(sched->last_epoch(), e);
      expect_lrs(*sched, *opt, lr, {0.1, 0.4});
      sched->step();
    }
  }
}

// PyTorch counts a milestone listed twice twice (bisect_right over the sorted list, repeats kept),
// and the lr drops at the milestone's epoch itself.
TEST(MoreLRSchedulers, MultiStepLRCountsARepeatedMilestoneTwice) {
  auto opt = make_two_group_sgd(1.0, 0.5);
  optim::MultiStepLR sched(*opt, {5, 2, 5}, 0.1);
  const std::vector<double> want = {1, 1, 0.1, 0.1, 0.1, 1e-3, 1e-3, 1e-3};
  for (std::size_t e = 0; e < want.size(); ++e) {
    EXPECT_NEAR(sched.get_last_lr()[0], want[e], 1e-15) << "epoch " << e;
    EXPECT_NEAR(opt->param_groups()[1].lr, 0.5 * want[e], 1e-15) << "epoch " << e;
    sched.step();
  }
}

// The factor is start_factor at epoch 0 and end_factor from total_iters on; the ends of the
// ranges PyTorch allows (start_factor 1, end_factor 0 and 1) are accepted.
TEST(MoreLRSchedulers, LinearLRStartsAtStartFactorAndStaysAtEndFactor) {
  auto opt = make_two_group_sgd(0.3, 0.6);
  optim::LinearLR sched(*opt, /*start_factor=*/0.25, /*end_factor=*/0.75, /*total_iters=*/4);
  EXPECT_EQ(sched.get_last_lr(), (std::vector<double>{0.3 * 0.25, 0.6 * 0.25}));
  for (int e = 1; e <= kEpochs; ++e) {
    sched.step();
    const double factor = e < 4 ? 0.25 + 0.125 * e : 0.75;
    EXPECT_NEAR(opt->param_groups()[0].lr, 0.3 * factor, 1e-16) << "epoch " << e;
    EXPECT_NEAR(opt->param_groups()[1].lr, 0.6 * factor, 1e-16) << "epoch " << e;
  }

  auto edge = make_two_group_sgd(0.3, 0.6);
  optim::LinearLR to_zero(*edge, /*start_factor=*/1.0, /*end_factor=*/0.0, /*total_iters=*/1);
  EXPECT_EQ(to_zero.get_last_lr(), (std::vector<double>{0.3, 0.6}));
  to_zero.step();
  to_zero.step();
  EXPECT_EQ(to_zero.get_last_lr(), (std::vector<double>{0.0, 0.0}));
  EXPECT_NO_THROW(optim::LinearLR(*edge, 0.5, /*end_factor=*/1.0, 3));
}

// A fresh optimiser (made with other lrs) and scheduler that load the states saved mid-run go
// on exactly as the run that never stopped.
TEST(MoreLRSchedulers, EachResumesFromItsStateDictMidRun) {
  for (const auto& [name, make, lr] : closed_form_schedules()) {
    SCOPED_TRACE(name);
    auto straight = make_two_group_sgd(0.1, 0.4);
    auto sched = make(*straight);
    for (int i = 0; i < 7; ++i) sched->step();
    const auto opt_state = straight->state_dict();
    const auto sched_state = sched->state_dict();

    auto resumed = make_two_group_sgd(0.7, 0.9);
    auto resumed_sched = make(*resumed);
    resumed->load_state_dict(opt_state);
    resumed_sched->load_state_dict(sched_state);
    for (int i = 0; i < kEpochs - 7; ++i) {
      ASSERT_EQ(resumed_sched->last_epoch(), sched->last_epoch());
      EXPECT_EQ(resumed_sched->get_last_lr(), sched->get_last_lr());
      EXPECT_EQ(resumed->param_groups()[0].lr, straight->param_groups()[0].lr);
      EXPECT_EQ(resumed->param_groups()[1].lr, straight->param_groups()[1].lr);
      expect_lrs(*resumed_sched, *resumed, lr, {0.1, 0.4});
      sched->step();
      resumed_sched->step();
    }
  }
}

// One epoch of a ReduceLROnPlateau table: the metric given, then the state after step(metric).
struct PlateauRow {
  double metric;
  double lr0, lr1;  // the groups' lrs
  double best;
  std::int64_t num_bad_epochs, cooldown_counter;
};

void expect_table(optim::ReduceLROnPlateau& sched, const optim::Optimizer& opt, const std::vector<PlateauRow>& table) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    const PlateauRow& row = table[i];
    sched.step(row.metric);
    SCOPED_TRACE("epoch " + std::to_string(i + 1));
    EXPECT_EQ(sched.last_epoch(), static_cast<std::int64_t>(i + 1));
    EXPECT_NEAR(opt.param_groups()[0].lr, row.lr0, 1e-15);
    EXPECT_NEAR(opt.param_groups()[1].lr, row.lr1, 1e-15);
    EXPECT_EQ(sched.get_last_lr(), (std::vector<double>{opt.param_groups()[0].lr, opt.param_groups()[1].lr}));
    EXPECT_EQ(sched.best(), row.best);
    EXPECT_EQ(sched.num_bad_epochs(), row.num_bad_epochs);
    EXPECT_EQ(sched.cooldown_counter(), row.cooldown_counter);
  }
}

// mode "min", threshold_mode "rel", threshold 0.1: better means below 0.9 * best. patience 2:
// the third bad epoch in a row lowers the lrs (factor 0.5). NaN is never better: a bad epoch.
//   epoch metric  better than (0.9 * best)?   bad  lrs
//   1     10      10 < inf           yes       0   1, 0.4      best 10
//   2     9.5     9.5 < 9            no        1
//   3     9       9 < 9              no        2
//   4     NaN     never              no        3 > 2: lower    0.5, 0.2, bad 0
//   5     8.9     8.9 < 9            yes       0               best 8.9
//   6     8.1     8.1 < 8.01         no        1
//   7     8       8 < 8.01           yes       0               best 8
//   8     8       8 < 7.2            no        1
//   9     7.5     no                           2
//   10    7.3     no                           3: lower        0.25, 0.1
//   11-12 7.3     no                           1, 2
//   13    7.3     no                           3: lower        0.125, 0.05
//   14    7.1     7.1 < 7.2          yes       0               best 7.1
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::vector<PlateauRow> kMinRelTable = {
    {10, 1, 0.4, 10, 0, 0},       {9.5, 1, 0.4, 10, 1, 0},       {9, 1, 0.4, 10, 2, 0},
    {kNaN, 0.5, 0.2, 10, 0, 0},   {8.9, 0.5, 0.2, 8.9, 0, 0},    {8.1, 0.5, 0.2, 8.9, 1, 0},
    {8, 0.5, 0.2, 8, 0, 0},       {8, 0.5, 0.2, 8, 1, 0},        {7.5, 0.5, 0.2, 8, 2, 0},
    {7.3, 0.25, 0.1, 8, 0, 0},    {7.3, 0.25, 0.1, 8, 1, 0},     {7.3, 0.25, 0.1, 8, 2, 0},
    {7.3, 0.125, 0.05, 8, 0, 0},  {7.1, 0.125, 0.05, 7.1, 0, 0},
};

TEST(ReduceLROnPlateau, MinModeWithARelativeThresholdAndANanMetric) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau sched(*opt, {.mode = "min", .factor = 0.5, .patience = 2, .threshold = 0.1});
  EXPECT_EQ(sched.best(), kInf);
  EXPECT_EQ(sched.get_last_lr(), (std::vector<double>{1.0, 0.4}));
  expect_table(sched, *opt, kMinRelTable);
}

// mode "max", threshold_mode "abs", threshold 0.5: better means above best + 0.5. patience 1,
// factor 0.1, cooldown 2: after a reduction, the next two epochs' bad epochs are not counted.
//   epoch metric  better (> best + 0.5)?  bad  cooldown  lrs
//   1     1       yes                     0    0         1, 0.4      best 1
//   2     1.4     1.4 > 1.5 no            1    0
//   3     1.5     1.5 > 1.5 no            2 > 1: lower, cooldown 2    0.1, 0.04, bad 0
//   4     0       no                      1 -> 0 (cooldown 2 -> 1)
//   5     0       no                      1 -> 0 (cooldown 1 -> 0)
//   6     0       no                      1    0
//   7     0       no                      2 > 1: lower, cooldown 2    0.01, 0.004
//   8     2       2 > 1.5 yes             0    1         best 2
//   9     2.4     2.4 > 2.5 no            1 -> 0 (cooldown 1 -> 0)
//   10    2.4     no                      1    0
//   11    2.6     2.6 > 2.5 yes           0    0         best 2.6 (with "rel", 2.6 > 3 would not be)
//   12    NaN     no                      1
//   13    NaN     no                      2 > 1: lower, cooldown 2    0.001, 0.0004
const std::vector<PlateauRow> kMaxAbsTable = {
    {1, 1, 0.4, 1, 0, 0},         {1.4, 1, 0.4, 1, 1, 0},          {1.5, 0.1, 0.04, 1, 0, 2},
    {0, 0.1, 0.04, 1, 0, 1},      {0, 0.1, 0.04, 1, 0, 0},         {0, 0.1, 0.04, 1, 1, 0},
    {0, 0.01, 0.004, 1, 0, 2},    {2, 0.01, 0.004, 2, 0, 1},       {2.4, 0.01, 0.004, 2, 0, 0},
    {2.4, 0.01, 0.004, 2, 1, 0},  {2.6, 0.01, 0.004, 2.6, 0, 0},   {kNaN, 0.01, 0.004, 2.6, 1, 0},
    {kNaN, 0.001, 0.0004, 2.6, 0, 2},
};
const optim::ReduceLROnPlateauOptions kMaxAbsOptions = {
    .mode = "max", .factor = 0.1, .patience = 1, .threshold = 0.5, .threshold_mode = "abs", .cooldown = 2};

TEST(ReduceLROnPlateau, MaxModeWithAnAbsoluteThresholdAndCooldown) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau sched(*opt, kMaxAbsOptions);
  EXPECT_EQ(sched.best(), -kInf);
  expect_table(sched, *opt, kMaxAbsTable);
}

// mode "max" with PyTorch's default threshold_mode "rel", threshold 0.1: better means above
// best * 1.1. patience 0, factor 0.5: every epoch that is not better lowers the lrs.
//   epoch metric  better (> best * 1.1)?   lrs
//   1     1       yes                      1, 0.4        best 1
//   2     1.05    1.05 > 1.1 no            0.5, 0.2
//   3     1.2     1.2 > 1.1 yes            0.5, 0.2      best 1.2
//   4     1.3     1.3 > 1.32 no            0.25, 0.1
//   5     1.33    1.33 > 1.32 yes          0.25, 0.1     best 1.33
const std::vector<PlateauRow> kMaxRelTable = {
    {1, 1, 0.4, 1, 0, 0},          {1.05, 0.5, 0.2, 1, 0, 0},    {1.2, 0.5, 0.2, 1.2, 0, 0},
    {1.3, 0.25, 0.1, 1.2, 0, 0},   {1.33, 0.25, 0.1, 1.33, 0, 0},
};

TEST(ReduceLROnPlateau, MaxModeWithARelativeThreshold) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau sched(*opt, {.mode = "max", .factor = 0.5, .patience = 0, .threshold = 0.1});
  expect_table(sched, *opt, kMaxRelTable);
}

// patience 0: every epoch that is not better lowers the lrs (factor 0.5), floored at each group's
// min_lr (0.3, 0.01); a fall of eps (0.06) or less is skipped.
//   epoch  group 0: 0.5 * lr, floor 0.3          group 1: 0.5 * lr, floor 0.01, eps 0.06
//   1      better: 1                              0.4
//   2      0.5                                    0.2   (falls 0.2)
//   3      max(0.25, 0.3) = 0.3 (the floor)       0.1   (falls 0.1)
//   4      max(0.15, 0.3) = 0.3: falls 0, kept    0.05 would fall 0.05 <= eps: kept at 0.1
//   5-6    0.3                                    0.1
TEST(ReduceLROnPlateau, MinLrFloorsEachGroupAndAFallOfEpsOrLessIsSkipped) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau sched(
      *opt, {.factor = 0.5, .patience = 0, .threshold_mode = "abs", .min_lr = {0.3, 0.01}, .eps = 0.06});
  expect_table(sched, *opt,
               {{5, 1, 0.4, 5, 0, 0},
                {5, 0.5, 0.2, 5, 0, 0},
                {5, 0.3, 0.1, 5, 0, 0},
                {5, 0.3, 0.1, 5, 0, 0},
                {5, 0.3, 0.1, 5, 0, 0},
                {5, 0.3, 0.1, 5, 0, 0}});

  // One min_lr is every group's, and the default eps (1e-8) lets a small lr fall to it.
  auto small = make_two_group_sgd(1e-6, 4e-7);
  optim::ReduceLROnPlateau one_floor(*small, {.factor = 0.5, .patience = 0, .min_lr = {3e-7}});
  one_floor.step(1);
  one_floor.step(1);
  EXPECT_EQ(one_floor.get_last_lr(), (std::vector<double>{5e-7, 3e-7}));
  one_floor.step(1);
  EXPECT_EQ(one_floor.get_last_lr(), (std::vector<double>{3e-7, 3e-7}));
}

// Stopped after every epoch of the max/abs table in turn (so mid-cooldown, with bad epochs
// counted, after a NaN), a fresh optimiser made with other lrs and a fresh scheduler load the two
// states and go on as the run that never stopped.
TEST(ReduceLROnPlateau, ResumesFromItsStateDictAtEveryEpoch) {
  for (std::size_t stop = 1; stop < kMaxAbsTable.size(); ++stop) {
    SCOPED_TRACE("stopped after epoch " + std::to_string(stop));
    auto straight = make_two_group_sgd(1.0, 0.4);
    optim::ReduceLROnPlateau sched(*straight, kMaxAbsOptions);
    for (std::size_t i = 0; i < stop; ++i) sched.step(kMaxAbsTable[i].metric);
    const auto state = sched.state_dict();
    for (const char* key : {"best", "num_bad_epochs", "cooldown_counter", "last_epoch", "last_lr.0", "last_lr.1"}) {
      ASSERT_EQ(state.count(key), 1U) << key;
      EXPECT_EQ(state.at(key).dtype(), kFloat64) << key;
      EXPECT_EQ(state.at(key).dim(), 0) << key;
    }
    EXPECT_EQ(state.size(), 6U);

    auto resumed = make_two_group_sgd(0.7, 0.9);
    optim::ReduceLROnPlateau resumed_sched(*resumed, kMaxAbsOptions);
    resumed->load_state_dict(straight->state_dict());
    resumed_sched.load_state_dict(state);
    EXPECT_EQ(resumed_sched.get_last_lr(), sched.get_last_lr());
    for (std::size_t i = stop; i < kMaxAbsTable.size(); ++i) {
      sched.step(kMaxAbsTable[i].metric);
      resumed_sched.step(kMaxAbsTable[i].metric);
      EXPECT_EQ(resumed_sched.last_epoch(), sched.last_epoch());
      EXPECT_EQ(resumed_sched.best(), sched.best());
      EXPECT_EQ(resumed_sched.num_bad_epochs(), sched.num_bad_epochs());
      EXPECT_EQ(resumed_sched.cooldown_counter(), sched.cooldown_counter());
      EXPECT_EQ(resumed_sched.get_last_lr(), sched.get_last_lr());
      EXPECT_EQ(resumed->param_groups()[0].lr, straight->param_groups()[0].lr);
      EXPECT_EQ(resumed->param_groups()[1].lr, straight->param_groups()[1].lr);
    }
  }
}

TEST(ReduceLROnPlateau, AStateThatDoesNotFitIsAClearErrorThatChangesNothing) {
  const auto f64 = [](double v) { return scalar_tensor(v, {.dtype = kFloat64}); };
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau sched(*opt, kMaxAbsOptions);
  for (int i = 0; i < 4; ++i) sched.step(kMaxAbsTable[i].metric);
  const auto good = sched.state_dict();
  // Each bad state differs from the scheduler's own in every other field too, so that a load that
  // set some fields before refusing another would show.
  auto different = good;
  different["best"] = f64(5);
  different["num_bad_epochs"] = f64(7);
  different["cooldown_counter"] = f64(3);
  different["last_epoch"] = f64(99);
  different["last_lr.0"] = f64(0.123);
  const auto with = [&](const std::string& key, std::optional<Tensor> value) {
    auto state = different;
    if (value) {
      state[key] = *value;
    } else {
      state.erase(key);
    }
    return state;
  };
  const std::vector<std::pair<std::map<std::string, Tensor>, std::string>> cases = {
      {with("best", std::nullopt), "expected a one-element 'best' tensor"},
      {with("best", f64(kNaN)), "'best' is NaN"},
      {with("num_bad_epochs", f64(-1)), "expected 'num_bad_epochs' to be a non-negative integer"},
      {with("cooldown_counter", f64(1.5)), "expected 'cooldown_counter' to be a non-negative integer"},
      {with("last_epoch", zeros({2})), "expected a one-element 'last_epoch' tensor"},
      {with("last_lr.0", std::nullopt), "expected a one-element 'last_lr.0' tensor"},
      {with("last_lr.2", f64(0.1)), "last lrs for 3 parameter groups but the optimiser has 2"},
  };
  for (const auto& [state, message] : cases) {
    SCOPED_TRACE(message);
    EXPECT_TRUE(throws_with<Error>([&] { sched.load_state_dict(state); }, message));
    const auto now = sched.state_dict();
    for (const auto& [key, t] : good) EXPECT_EQ(now.at(key).item<double>(), t.item<double>()) << key;
  }
}

// A per-group min_lr no longer fits once a group is added: the reduction is refused and the step
// changes nothing; one min_lr for all groups still applies, as PyTorch's default_min_lr.
TEST(ReduceLROnPlateau, AGroupAddedLaterNeedsOneMinLrForAll) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau per_group(*opt, {.patience = 0, .min_lr = {0.0, 0.0}});
  optim::ReduceLROnPlateau one_for_all(*opt, {.patience = 0, .min_lr = {0.0}});
  per_group.step(1);
  one_for_all.step(1);
  opt->add_param_group({zeros({1}).set_requires_grad(true)}, 0.2);
  EXPECT_TRUE(throws_with<Error>([&] { per_group.step(1); }, "the optimiser has 3 parameter groups but the "
                                                             "scheduler was given 2 min_lrs"));
  EXPECT_EQ(per_group.last_epoch(), 1);
  EXPECT_EQ(per_group.num_bad_epochs(), 0);
  EXPECT_EQ(opt->param_groups()[2].lr, 0.2);
  one_for_all.step(1);
  EXPECT_NEAR(opt->param_groups()[2].lr, 0.02, 1e-17);
}

using Batches = std::vector<std::pair<Tensor, Tensor>>;

// A training run whose scheduler is stepped with a scripted validation metric after each batch.
struct PlateauRun {
  nn::Sequential model;
  optim::SGD optimizer;
  optim::ReduceLROnPlateau scheduler;
  explicit PlateauRun(std::uint64_t init_seed)
      : model(make_model(init_seed)),
        optimizer(model->parameters(), {.lr = 0.1, .momentum = 0.9}),
        scheduler(optimizer, kMaxAbsOptions) {}
  static nn::Sequential make_model(std::uint64_t init_seed) {
    manual_seed(init_seed);
    return nn::Sequential(nn::Linear(4, 3), nn::Tanh(), nn::Linear(3, 2));
  }
  void train(const Batches& batches, std::size_t first_epoch) {
    for (std::size_t i = 0; i < batches.size(); ++i) {
      optimizer.zero_grad();
      nn::functional::mse_loss(model->forward(batches[i].first), batches[i].second).backward();
      optimizer.step();
      scheduler.step(kMaxAbsTable[first_epoch + i].metric);
    }
  }
};

std::vector<std::vector<double>> parameter_values(const nn::Module& model) {
  std::vector<std::vector<double>> out;
  for (const Tensor& p : model.parameters()) out.push_back(values_of(p));
  return out;
}

TEST(ReduceLROnPlateau, ATrainingCheckpointResumesItExactly) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  Batches first, second;
  for (std::size_t i = 0; i < kMaxAbsTable.size(); ++i) {
    (i < 4 ? first : second).emplace_back(random_tensor({8, 4}, kFloat32, rng), random_tensor({8, 2}, kFloat32, rng));
  }
  ScratchDir dir;
  const std::string path = dir.file("plateau.safetensors");

  PlateauRun straight(seed);
  straight.train(first, 0);  // stops in the cooldown after the first reduction (kMaxAbsTable)
  ASSERT_EQ(straight.scheduler.cooldown_counter(), 1);
  save_checkpoint(path, *straight.model, straight.optimizer, &straight.scheduler, {.epoch = 4});
  straight.train(second, first.size());

  PlateauRun resumed(seed + 1);
  load_checkpoint(path, *resumed.model, resumed.optimizer, &resumed.scheduler);
  EXPECT_EQ(resumed.scheduler.last_epoch(), 4);
  EXPECT_EQ(resumed.scheduler.cooldown_counter(), 1);
  EXPECT_EQ(resumed.scheduler.best(), 1.0);
  EXPECT_EQ(resumed.optimizer.param_groups()[0].lr, 0.1 * 0.1);
  resumed.train(second, first.size());

  EXPECT_EQ(parameter_values(*resumed.model), parameter_values(*straight.model));
  EXPECT_EQ(resumed.scheduler.state_dict().at("best").item<double>(), 2.6);
  for (const auto& [key, t] : straight.scheduler.state_dict()) {
    EXPECT_EQ(resumed.scheduler.state_dict().at(key).item<double>(), t.item<double>()) << key;
  }
}

// A checkpoint saved with a StepLR does not fit a ReduceLROnPlateau: an error naming the file,
// after which the model, optimiser and scheduler are as they were; and the other way round.
TEST(ReduceLROnPlateau, ACheckpointOfAnotherSchedulerIsAnErrorThatChangesNothing) {
  ScratchDir dir;
  const std::string path = dir.file("steplr.safetensors");
  PlateauRun saved(1);
  optim::StepLR step_lr(saved.optimizer, 1, 0.5);
  step_lr.step();  // the saved lr is 0.05
  save_checkpoint(path, *saved.model, saved.optimizer, &step_lr, {});

  PlateauRun run(2);
  run.scheduler.step(1);
  run.scheduler.step(1.2);
  const auto before = run.scheduler.state_dict();
  const auto parameters = parameter_values(*run.model);
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *run.model, run.optimizer, &run.scheduler); },
                                 "expected a one-element 'best' tensor"));
  for (const auto& [key, t] : before) EXPECT_EQ(run.scheduler.state_dict().at(key).item<double>(), t.item<double>()) << key;
  EXPECT_EQ(run.optimizer.param_groups()[0].lr, 0.1);
  EXPECT_EQ(parameter_values(*run.model), parameters);

  // And the other way: a ReduceLROnPlateau's checkpoint does not fit a StepLR.
  const std::string plateau_path = dir.file("plateau.safetensors");
  save_checkpoint(plateau_path, *run.model, run.optimizer, &run.scheduler, {});
  const std::int64_t epoch_before = step_lr.last_epoch();
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(plateau_path, *saved.model, saved.optimizer, &step_lr); },
                                 "which an LRScheduler does not save"));
  EXPECT_EQ(step_lr.last_epoch(), epoch_before);
  EXPECT_EQ(saved.optimizer.param_groups()[0].lr, 0.05);
}

// A group added after the last step is not in get_last_lr() yet (PyTorch's _last_lr is the lrs of
// the last step): the state then has fewer last lrs than the optimiser has groups, and must still
// load, into the scheduler itself and through a training checkpoint into a run built the same way.
TEST(ReduceLROnPlateau, ItsStateLoadsAfterAGroupWasAddedSinceTheLastStep) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  optim::ReduceLROnPlateau sched(*opt, {.patience = 0});
  sched.step(1);
  sched.step(1);  // lowered to 0.1, 0.04
  opt->add_param_group({zeros({1}).set_requires_grad(true)}, 0.2);
  const std::vector<double> last_lr = sched.get_last_lr();
  ASSERT_EQ(last_lr.size(), 2U);
  const auto state = sched.state_dict();
  ASSERT_EQ(state.count("last_lr.2"), 0U);
  EXPECT_NO_THROW(sched.load_state_dict(state));
  EXPECT_EQ(sched.get_last_lr(), last_lr);

  ScratchDir dir;
  const std::string path = dir.file("plateau_added_group.safetensors");
  PlateauRun saved(1);
  saved.scheduler.step(1);
  saved.optimizer.add_param_group({zeros({2}).set_requires_grad(true)}, 0.05);
  save_checkpoint(path, *saved.model, saved.optimizer, &saved.scheduler, {});

  PlateauRun resumed(2);
  resumed.optimizer.add_param_group({zeros({2}).set_requires_grad(true)}, 0.07);
  EXPECT_NO_THROW(load_checkpoint(path, *resumed.model, resumed.optimizer, &resumed.scheduler));
  EXPECT_EQ(resumed.scheduler.last_epoch(), 1);
  EXPECT_EQ(resumed.scheduler.best(), 1.0);
  EXPECT_EQ(resumed.optimizer.param_groups()[1].lr, 0.05);
}

TEST(MoreLRSchedulers, BadArgumentsAreClearErrors) {
  auto opt = make_two_group_sgd(1.0, 0.4);
  const auto refuses = [](const std::function<void()>& make, const std::string& message) {
    EXPECT_TRUE(throws_with<Error>(make, message)) << message;
  };
  refuses([&] { optim::LinearLR(*opt, /*start_factor=*/0.0); }, "expected start_factor in (0, 1], found 0");
  refuses([&] { optim::LinearLR(*opt, /*start_factor=*/1.5); }, "expected start_factor in (0, 1], found 1.5");
  refuses([&] { optim::LinearLR(*opt, 0.5, /*end_factor=*/-0.1); }, "expected end_factor in [0, 1], found -0.1");
  refuses([&] { optim::LinearLR(*opt, 0.5, /*end_factor=*/1.5); }, "expected end_factor in [0, 1], found 1.5");
  refuses([&] { optim::LinearLR(*opt, 0.5, 1.0, /*total_iters=*/0); }, "expected total_iters > 0, found 0");
  refuses([&] { optim::LambdaLR(*opt, std::vector<optim::LambdaLR::LrLambda>{[](std::int64_t) { return 1.0; }}); },
          "expected 2 lr_lambdas (one per parameter group), found 1");
  refuses([&] { optim::LambdaLR(*opt, optim::LambdaLR::LrLambda{}); }, "the lr_lambda of parameter group 0 is empty");

  refuses([&] { optim::ReduceLROnPlateau(*opt, {.factor = 1.0}); }, "expected factor in [0, 1), found 1");
  refuses([&] { optim::ReduceLROnPlateau(*opt, {.factor = -0.5}); }, "expected factor in [0, 1), found -0.5");
  refuses([&] { optim::ReduceLROnPlateau(*opt, {.patience = -1}); }, "expected patience >= 0, found -1");
  refuses([&] { optim::ReduceLROnPlateau(*opt, {.cooldown = -2}); }, "expected cooldown >= 0, found -2");
  refuses([&] { optim::ReduceLROnPlateau(*opt, {.mode = "mean"}); }, "mode must be \"min\" or \"max\", found \"mean\"");
  refuses([&] { optim::ReduceLROnPlateau(*opt, {.threshold_mode = "relative"}); },
          "threshold_mode must be \"rel\" or \"abs\", found \"relative\"");
  refuses([&] { optim::ReduceLROnPlateau(*opt, {.min_lr = {0.1, 0.1, 0.1}}); },
          "expected one min_lr, or one for each of the 2 parameter groups, found 3");
  // A refused scheduler leaves the optimiser's lrs alone.
  EXPECT_EQ(opt->param_groups()[0].lr, 1.0);
  EXPECT_EQ(opt->param_groups()[1].lr, 0.4);
}

}  // namespace
}  // namespace hwaro::test
