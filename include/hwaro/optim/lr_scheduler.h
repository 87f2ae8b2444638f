#pragma once
// Learning-rate schedulers with torch.optim.lr_scheduler's names and formulas. Each is
// closed-form in last_epoch, so a checkpoint's last_epoch restores the schedule exactly:
//   hw::optim::CosineAnnealingLR sched(opt, /*T_max=*/epochs);
//   for (...) { train_one_epoch(); sched.step(); }
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwaro/optim.h"

namespace hwaro::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  // {"last_epoch": 0-dim float64}; load re-applies the lr for that epoch.
  std::map<std::string, Tensor> state_dict() const;
  void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}
  // Call at the end of a derived constructor, once its arguments are checked: as PyTorch's
  // group.setdefault('initial_lr', group['lr']), a group without an initial_lr gets its lr, and
  // the base lrs are the groups' initial_lr; then the lrs of epoch 0 are set.
  void apply();
  virtual double lr_at(std::int64_t epoch, double base_lr) const = 0;
  // The momentum (SGD's momentum, Adam's beta1) for an epoch, for schedulers that cycle it.
  virtual std::optional<double> momentum_at(std::int64_t /*epoch*/) const { return std::nullopt; }

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  std::int64_t last_epoch_ = 0;

 private:
  // Sets every group's lr (and momentum) for `epoch`, then last_epoch; a refused epoch changes nothing.
  void apply_epoch(std::int64_t epoch);
};

// lr = base_lr * gamma^floor(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 private:
  double lr_at(std::int64_t epoch, double base_lr) const override;
  std::int64_t step_size_;
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0);

 private:
  double lr_at(std::int64_t epoch, double base_lr) const override;
  std::int64_t t_max_;
  double eta_min_;
};

// One cycle with cosine annealing: from max_lr/div_factor up to max_lr over
// pct_start of total_steps, then down to initial_lr/final_div_factor. With cycle_momentum (the
// default, as PyTorch's), the momentum (SGD's momentum, Adam's beta1) moves the other way: from
// max_momentum down to base_momentum while the lr rises, then back up. As PyTorch's, last_epoch
// may reach total_steps (the last step() of a loop of total_steps iterations); stepping past it is
// an error, which leaves the schedule as it was.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start = 0.3,
             double div_factor = 25, double final_div_factor = 1e4, bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95);

 private:
  double lr_at(std::int64_t epoch, double base_lr) const override;
  std::optional<double> momentum_at(std::int64_t epoch) const override;
  // Where the epoch is in the cycle: the warm-up phase (true) or the annealing one, and how far along it.
  std::pair<bool, double> phase(std::int64_t epoch) const;
  double max_lr_;
  std::int64_t total_steps_;
  double pct_start_;
  double initial_lr_;
  double min_lr_;
  bool cycle_momentum_;
  double base_momentum_;
  double max_momentum_;
};

}  // namespace hwaro::optim
