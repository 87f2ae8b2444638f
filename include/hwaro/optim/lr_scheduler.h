#pragma once
// Learning-rate schedulers with torch.optim.lr_scheduler's names and formulas. Each is
// closed-form in last_epoch, so a checkpoint's last_epoch restores the schedule exactly:
//   hw::optim::CosineAnnealingLR sched(opt, /*T_max=*/epochs);
//   for (...) { train_one_epoch(); sched.step(); }
// ReduceLROnPlateau, which follows a metric instead, is in hwaro/optim/reduce_lr_on_plateau.h.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwaro/optim.h"

namespace hwaro::optim {

// What a training checkpoint (hw::save_checkpoint) saves of a scheduler and restores into it.
// LRScheduler's schedules are closed-form in last_epoch; ReduceLROnPlateau's is not (its step
// takes a metric and it has no lr for a given epoch), so it is no LRScheduler: the two share only
// this, which is what the checkpoint functions take.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::map<std::string, Tensor> state_dict() const = 0;
  virtual void load_state_dict(const std::map<std::string, Tensor>& state) = 0;
};

class LRScheduler : public Scheduler {
 public:
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  // As PyTorch's, last_epoch and base_lrs: {"last_epoch", "base_lrs.<g>"}, 0-dim float64. Load takes
  // the state's base lrs (a scheduler made before optimizer.load_state_dict, which took its base
  // lrs from the fresh optimiser, then resumes the saved run), keeps its own where the state has
  // none (saved by an older hwaro), and re-applies the lr for last_epoch. A base lr count other
  // than the optimiser's group count is an error, and a refused state changes nothing.
  // OneCycleLR's lrs come from its options (max_lr, div_factor), as PyTorch's, not from base_lrs.
  std::map<std::string, Tensor> state_dict() const override;
  void load_state_dict(const std::map<std::string, Tensor>& state) override;

 protected:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}
  // Call at the end of a derived constructor, once its arguments are checked: as PyTorch's
  // group.setdefault('initial_lr', group['lr']), a group without an initial_lr gets its lr, and
  // the base lrs are the groups' initial_lr; then the lrs of epoch 0 are set.
  void apply();
  // The lr of parameter group `group` (base_lrs_[group] is its initial_lr) at `epoch`.
  virtual double lr_at(std::int64_t epoch, std::size_t group) const = 0;
  // A group's momentum (SGD's momentum, Adam's beta1) at `epoch`, for schedulers that cycle it.
  virtual std::optional<double> momentum_at(std::int64_t /*epoch*/, std::size_t /*group*/) const {
    return std::nullopt;
  }

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  std::int64_t last_epoch_ = 0;

 private:
  // Sets every group's lr (and momentum) for `epoch`, then last_epoch; a refused epoch changes nothing.
  void apply_epoch(std::int64_t epoch);
  // Refuses an optimiser whose group count changed since the scheduler was made.
  void check_group_count() const;
  friend class SequentialLR;  // asks its schedulers for their lrs and keeps their base lrs its own
};

// lr = base_lr * gamma^floor(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  std::int64_t step_size_;
  double gamma_;
};

// lr = base_lr * gamma^(the number of milestones <= epoch). The milestones are sorted here, and one
// listed twice counts twice, as PyTorch's (bisect_right over the sorted milestones, repeats kept).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1);

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  std::vector<std::int64_t> milestones_;  // sorted, repeats kept
  double gamma_;
};

// lr = base_lr * gamma^epoch
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  double gamma_;
};

// lr = base_lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) / total_iters):
// the factor moves linearly from start_factor to end_factor over total_iters epochs, then stays.
// As PyTorch's, start_factor is in (0, 1] and end_factor in [0, 1]; total_iters must be > 0, where
// PyTorch's closed form would divide by zero.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           std::int64_t total_iters = 5);

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  double start_factor_;
  double end_factor_;
  std::int64_t total_iters_;
};

// lr = base_lr * lr_lambda(epoch), with one function for every group or one per group. As
// PyTorch's (which skips plain functions), state_dict cannot hold the functions: make the
// scheduler again with the same ones, then load its state.
class LambdaLR : public LRScheduler {
 public:
  using LrLambda = std::function<double(std::int64_t epoch)>;
  LambdaLR(Optimizer& optimizer, LrLambda lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas);

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  std::vector<LrLambda> lr_lambdas_;  // one per group
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0);

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  std::int64_t t_max_;
  double eta_min_;
};

// OneCycleLR's options: torch.optim.lr_scheduler.OneCycleLR's names, order and defaults.
//   hw::optim::OneCycleLR sched(opt, {.max_lr = {0.01}, .epochs = 10, .steps_per_epoch = batches});
//   hw::optim::OneCycleLR sched(opt, {.max_lr = {0.01, 0.1}, .total_steps = 1000,
//                                     .anneal_strategy = "linear", .three_phase = true});
struct OneCycleLROptions {
  // The peak lr of each parameter group, or one value for all of them. PyTorch takes a float or a
  // list with one per group; hwaro's one-element list is its float (every group's), kept for brevity.
  std::vector<double> max_lr = {};
  // The number of steps in the cycle: total_steps where given, else epochs * steps_per_epoch.
  std::optional<std::int64_t> total_steps = std::nullopt;
  std::optional<std::int64_t> epochs = std::nullopt;
  std::optional<std::int64_t> steps_per_epoch = std::nullopt;
  double pct_start = 0.3;               // the share of the cycle spent raising the lr
  std::string anneal_strategy = "cos";  // "cos" (cosine annealing) or "linear"
  bool cycle_momentum = true;
  // base_momentum is the momentum at the lr's peak, max_momentum at the cycle's start; as max_lr,
  // one per group or one for all of them. Only read with cycle_momentum, as PyTorch's.
  std::vector<double> base_momentum = {0.85};
  std::vector<double> max_momentum = {0.95};
  double div_factor = 25;         // initial_lr = max_lr / div_factor
  double final_div_factor = 1e4;  // min_lr = initial_lr / final_div_factor
  // The paper's three phases: up to max_lr, back down to initial_lr over as many steps, then
  // down to min_lr (the momentum stays at max_momentum). Else fastai's two: up, then down to min_lr.
  bool three_phase = false;
};

// One cycle: each group's lr rises from initial_lr to max_lr over pct_start of the cycle, then
// falls to min_lr (see OneCycleLROptions). With cycle_momentum (the default, as PyTorch's), the
// momentum (SGD's momentum, Adam's beta1) moves the other way: from max_momentum down to
// base_momentum while the lr rises, then back up. As PyTorch's, last_epoch may reach total_steps
// (the last step() of a loop of total_steps iterations); stepping past it is an error, which
// leaves the schedule as it was. So is a step that falls in a phase of length 0, where PyTorch
// divides by zero: step 0 when pct_start * total_steps is 1, the last step when pct_start is 1.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, OneCycleLROptions options);
  // The first form, kept: one max_lr for every group, two phases, cosine annealing.
  OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start = 0.3,
             double div_factor = 25, double final_div_factor = 1e4, bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95);

 private:
  // A group's lrs at the ends of the phases, indices into lrs_[group]; its momenta, into momenta_[group].
  enum Level { kInitialLr, kMaxLr, kMinLr };
  enum MomentumLevel { kBaseMomentum, kMaxMomentum };
  // As PyTorch's _schedule_phases: a phase runs from the previous one's end_step (0 for the
  // first) to its own, annealing the lr and the momentum between its two ends.
  struct Phase {
    double end_step;
    Level lr_from, lr_to;
    MomentumLevel momentum_from, momentum_to;
  };
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  std::optional<double> momentum_at(std::int64_t epoch, std::size_t group) const override;
  // The phase the epoch is in, and how far along it (0 to 1, past 1 at epoch total_steps).
  std::pair<const Phase*, double> phase(std::int64_t epoch) const;
  double anneal(double from, double to, double pct) const;
  std::int64_t total_steps_;
  bool linear_;
  bool cycle_momentum_;
  std::vector<Phase> phases_;
  std::vector<std::array<double, 3>> lrs_;      // per group, by Level
  std::vector<std::array<double, 2>> momenta_;  // per group, by MomentumLevel
};

// torch.optim.lr_scheduler.SequentialLR: schedulers[i] sets the lrs from milestones[i - 1] on,
// each starting from its own epoch 0 there, e.g. a warm-up, then cosine annealing:
//   auto warmup = std::make_shared<hw::optim::LinearLR>(opt, 0.1, 1.0, 5);
//   auto cosine = std::make_shared<hw::optim::CosineAnnealingLR>(opt, 95);
//   hw::optim::SequentialLR sched(opt, {warmup, cosine}, {5});
// Step only the SequentialLR. Its state_dict is an LRScheduler's; loading its base lrs gives them
// to its schedulers too. One more scheduler than milestones and every scheduler on this optimiser
// (PyTorch's checks); milestones increasing and positive (hwaro's: PyTorch does not check them).
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<std::int64_t> milestones);
  void load_state_dict(const std::map<std::string, Tensor>& state) override;

 private:
  double lr_at(std::int64_t epoch, std::size_t group) const override;
  std::optional<double> momentum_at(std::int64_t epoch, std::size_t group) const override;
  // The scheduler in charge at `epoch`, and the epoch in its own count.
  std::pair<const LRScheduler*, std::int64_t> in_charge(std::int64_t epoch) const;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<std::int64_t> milestones_;
};

}  // namespace hwaro::optim
