// ReduceLROnPlateau: PyTorch's step (better, bad epochs, cooldown, reduction) and a state_dict of
// its counters as 0-dim float64 tensors, so a training checkpoint resumes it exactly.
#include "hwaro/optim/reduce_lr_on_plateau.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "hwaro/errors.h"
#include "hwaro/ops.h"

namespace hwaro::optim {
namespace {

std::vector<double> group_lrs(const Optimizer& optimizer) {
  std::vector<double> lrs;
  for (const ParamGroup& group : optimizer.param_groups()) lrs.push_back(group.lr);
  return lrs;
}

double value_in(const std::map<std::string, Tensor>& state, const std::string& key) {
  const auto it = state.find(key);
  HWARO_CHECK(it != state.end() && it->second.defined() && it->second.numel() == 1,
              "ReduceLROnPlateau::load_state_dict: expected a one-element '", key, "' tensor, found none");
  return it->second.item<double>();
}

// Below 2^53, where a double still counts every integer and the conversion is defined.
std::int64_t count_in(const std::map<std::string, Tensor>& state, const std::string& key) {
  const double value = value_in(state, key);
  HWARO_CHECK(value >= 0 && value < 9.007199254740992e15 && value == std::floor(value),
              "ReduceLROnPlateau::load_state_dict: expected '", key,
              "' to be a non-negative integer below 2^53, found ", value);
  return static_cast<std::int64_t>(value);
}

Tensor float64_scalar(double value) { return scalar_tensor(value, {.dtype = kFloat64}); }

}  // namespace

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions o)
    : optimizer_(optimizer),
      maximize_(o.mode == "max"),
      relative_threshold_(o.threshold_mode == "rel"),
      factor_(o.factor),
      patience_(o.patience),
      threshold_(o.threshold),
      cooldown_(o.cooldown),
      min_lrs_(std::move(o.min_lr)),
      eps_(o.eps),
      best_(maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()),
      last_lr_(group_lrs(optimizer)) {
  HWARO_CHECK(o.mode == "min" || o.mode == "max", "ReduceLROnPlateau: mode must be \"min\" or \"max\", found \"",
              o.mode, "\"");
  HWARO_CHECK(o.threshold_mode == "rel" || o.threshold_mode == "abs",
              "ReduceLROnPlateau: threshold_mode must be \"rel\" or \"abs\", found \"", o.threshold_mode, "\"");
  // PyTorch refuses factor >= 1 only; a negative factor would make the lrs negative.
  HWARO_CHECK(factor_ >= 0 && factor_ < 1, "ReduceLROnPlateau: expected factor in [0, 1), found ", factor_);
  HWARO_CHECK(patience_ >= 0, "ReduceLROnPlateau: expected patience >= 0, found ", patience_);
  HWARO_CHECK(cooldown_ >= 0, "ReduceLROnPlateau: expected cooldown >= 0, found ", cooldown_);
  const std::size_t groups = optimizer.param_groups().size();
  HWARO_CHECK(min_lrs_.size() == 1 || min_lrs_.size() == groups, "ReduceLROnPlateau: expected one min_lr, or one ",
              "for each of the ", groups, " parameter groups, found ", min_lrs_.size());
}

bool ReduceLROnPlateau::is_better(double metric) const {
  // As PyTorch's _is_better; every comparison with a NaN is false, so a NaN metric is a bad epoch.
  if (maximize_) return relative_threshold_ ? metric > best_ * (threshold_ + 1.0) : metric > best_ + threshold_;
  return relative_threshold_ ? metric < best_ * (1.0 - threshold_) : metric < best_ - threshold_;
}

double ReduceLROnPlateau::min_lr_of(std::size_t group) const {
  return min_lrs_.size() == 1 ? min_lrs_[0] : min_lrs_[group];
}

void ReduceLROnPlateau::reduce_lrs() {
  auto& groups = optimizer_.param_groups();
  HWARO_CHECK(min_lrs_.size() == 1 || min_lrs_.size() == groups.size(), "ReduceLROnPlateau: the optimiser has ",
              groups.size(), " parameter groups but the scheduler was given ", min_lrs_.size(),
              " min_lrs, one per group; make the scheduler after adding groups");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double old_lr = groups[g].lr;
    const double new_lr = std::max(old_lr * factor_, min_lr_of(g));
    if (old_lr - new_lr > eps_) groups[g].lr = new_lr;
  }
}

// The counters are updated in locals and stored once reduce_lrs, the one step that can refuse,
// has passed, so a refused step changes nothing.
void ReduceLROnPlateau::step(double metric) {
  double best = best_;
  std::int64_t bad_epochs = num_bad_epochs_ + 1;
  std::int64_t cooldown_counter = cooldown_counter_;
  if (is_better(metric)) {
    best = metric;
    bad_epochs = 0;
  }
  if (cooldown_counter > 0) {  // bad epochs in the cooldown after a reduction are not counted
    --cooldown_counter;
    bad_epochs = 0;
  }
  if (bad_epochs > patience_) {
    reduce_lrs();
    cooldown_counter = cooldown_;
    bad_epochs = 0;
  }
  best_ = best;
  num_bad_epochs_ = bad_epochs;
  cooldown_counter_ = cooldown_counter;
  ++last_epoch_;
  last_lr_ = group_lrs(optimizer_);
}

std::map<std::string, Tensor> ReduceLROnPlateau::state_dict() const {
  std::map<std::string, Tensor> out = {
      {"best", float64_scalar(best_)},
      {"num_bad_epochs", float64_scalar(static_cast<double>(num_bad_epochs_))},
      {"cooldown_counter", float64_scalar(static_cast<double>(cooldown_counter_))},
      {"last_epoch", float64_scalar(static_cast<double>(last_epoch_))},
  };
  for (std::size_t g = 0; g < last_lr_.size(); ++g) out["last_lr." + std::to_string(g)] = float64_scalar(last_lr_[g]);
  return out;
}

void ReduceLROnPlateau::load_state_dict(const std::map<std::string, Tensor>& state) {
  const double best = value_in(state, "best");
  HWARO_CHECK(!std::isnan(best), "ReduceLROnPlateau::load_state_dict: 'best' is NaN, which no metric can beat");
  const std::int64_t bad_epochs = count_in(state, "num_bad_epochs");
  const std::int64_t cooldown_counter = count_in(state, "cooldown_counter");
  const std::int64_t last_epoch = count_in(state, "last_epoch");
  const std::size_t groups = optimizer_.param_groups().size();
  const auto saved_groups = static_cast<std::size_t>(
      std::count_if(state.begin(), state.end(), [](const auto& entry) { return entry.first.starts_with("last_lr."); }));
  // Fewer is a group added after the last step (get_last_lr() has the lrs of the last step, as
  // PyTorch's _last_lr); more cannot be this optimiser's.
  HWARO_CHECK(saved_groups >= 1 && saved_groups <= groups,
              "ReduceLROnPlateau::load_state_dict: the state has last lrs for ", saved_groups,
              " parameter groups but the optimiser has ", groups, "; was it saved for another optimiser?");
  std::vector<double> last_lr;
  for (std::size_t g = 0; g < saved_groups; ++g) {
    last_lr.push_back(value_in(state, "last_lr." + std::to_string(g)));
  }

  best_ = best;
  num_bad_epochs_ = bad_epochs;
  cooldown_counter_ = cooldown_counter;
  last_epoch_ = last_epoch;
  last_lr_ = std::move(last_lr);
}

}  // namespace hwaro::optim
