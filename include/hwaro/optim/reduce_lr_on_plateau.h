#pragma once
// ReduceLROnPlateau with torch.optim.lr_scheduler.ReduceLROnPlateau's options, defaults and rule:
// the lrs are multiplied by `factor` once a metric has not improved for more than `patience` epochs.
//   hw::optim::ReduceLROnPlateau sched(opt, {.mode = "min", .patience = 5});
//   for (...) { train_one_epoch(); sched.step(validation_loss); }
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hwaro/optim.h"
#include "hwaro/optim/lr_scheduler.h"

namespace hwaro::optim {

// PyTorch's arguments, in its order and with its defaults.
struct ReduceLROnPlateauOptions {
  // "min": the metric should fall (a loss); "max": it should rise (an accuracy).
  std::string mode = "min";
  double factor = 0.1;           // new lr = lr * factor; must be in [0, 1)
  std::int64_t patience = 10;    // the bad epochs tolerated; the lrs fall at the next one
  double threshold = 1e-4;       // how much better than the best a metric must be to count
  // "rel": better means below best * (1 - threshold) in "min" mode, above best * (1 + threshold)
  // in "max"; "abs": below best - threshold, above best + threshold.
  std::string threshold_mode = "rel";
  std::int64_t cooldown = 0;     // epochs after a reduction whose bad epochs are not counted
  // Each group's lowest lr, or one value for every group (PyTorch's float, as OneCycleLR's max_lr).
  std::vector<double> min_lr = {0.0};
  double eps = 1e-8;             // a reduction of a group's lr by eps or less is skipped
};

// Not an LRScheduler (see Scheduler): the lrs depend on the metrics seen, not on last_epoch alone,
// so the state_dict holds the counters, and the lrs themselves travel in the optimiser's state.
// A metric that is NaN is never better than the best, so it counts as a bad epoch, as in PyTorch.
class ReduceLROnPlateau : public Scheduler {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  // One epoch's metric. A reduction with a per-group min_lr whose count no longer matches the
  // optimiser's groups (one was added) is an error that changes nothing.
  void step(double metric);
  std::vector<double> get_last_lr() const { return last_lr_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }  // +inf ("min") or -inf ("max") before the first metric
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  std::int64_t cooldown_counter() const { return cooldown_counter_; }
  // {"best", "num_bad_epochs", "cooldown_counter", "last_epoch", "last_lr.<g>"}, 0-dim float64.
  // The options are not saved: make the scheduler with the same ones, then load. Load the
  // optimiser's state too, which holds the reduced lrs. A state that does not fit (a missing key,
  // a count that is not a non-negative integer, a NaN best, none or more last lrs than the
  // optimiser has groups; fewer is a group added since the last step) is an error that changes nothing.
  std::map<std::string, Tensor> state_dict() const override;
  void load_state_dict(const std::map<std::string, Tensor>& state) override;

 private:
  bool is_better(double metric) const;
  // Every group's lr times factor, floored at its min_lr; a group whose lr would fall by eps or
  // less keeps it.
  void reduce_lrs();
  double min_lr_of(std::size_t group) const;

  Optimizer& optimizer_;
  bool maximize_;           // mode "max"
  bool relative_threshold_;  // threshold_mode "rel"
  double factor_;
  std::int64_t patience_;
  double threshold_;
  std::int64_t cooldown_;
  std::vector<double> min_lrs_;  // one for every group, or one per group
  double eps_;

  double best_;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
  std::int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace hwaro::optim
