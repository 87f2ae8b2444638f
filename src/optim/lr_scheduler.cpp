// Learning-rate schedulers in closed form: lr is a function of last_epoch and each
// group's base lr, so loading last_epoch from a checkpoint restores the schedule exactly.
#include <cmath>
#include <numbers>

#include "hwaro/errors.h"
#include "hwaro/ops.h"
#include "hwaro/optim/lr_scheduler.h"

namespace hwaro::optim {

void LRScheduler::apply() {
  for (ParamGroup& group : optimizer_.param_groups()) {
    if (!group.initial_lr) group.initial_lr = group.lr;
    base_lrs_.push_back(*group.initial_lr);
  }
  apply_epoch(last_epoch_);
}

// Everything is computed before anything is set, so an epoch the schedule refuses (OneCycleLR
// past total_steps) leaves last_epoch, the lrs and the momenta as they were.
void LRScheduler::apply_epoch(std::int64_t epoch) {
  auto& groups = optimizer_.param_groups();
  HWARO_CHECK(groups.size() == base_lrs_.size(), "LRScheduler: the optimiser had ", base_lrs_.size(),
              " parameter groups when the scheduler was made and has ", groups.size(),
              " now; make the scheduler after adding groups");
  const std::optional<double> momentum = momentum_at(epoch);
  std::vector<double> lrs;
  for (std::size_t i = 0; i < groups.size(); ++i) lrs.push_back(lr_at(epoch, base_lrs_[i]));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i].lr = lrs[i];
    if (momentum) groups[i].momentum = *momentum;
  }
  last_lr_ = std::move(lrs);
  last_epoch_ = epoch;
}

void LRScheduler::step() { apply_epoch(last_epoch_ + 1); }

std::map<std::string, Tensor> LRScheduler::state_dict() const {
  return {{"last_epoch", scalar_tensor(static_cast<double>(last_epoch_), {.dtype = kFloat64})}};
}

void LRScheduler::load_state_dict(const std::map<std::string, Tensor>& state) {
  auto it = state.find("last_epoch");
  HWARO_CHECK(it != state.end() && it->second.defined() && it->second.numel() == 1,
              "LRScheduler::load_state_dict: expected a one-element 'last_epoch' tensor, found none");
  const double epoch = it->second.item<double>();
  // Below 2^53, where a double still counts every integer and the conversion below is defined.
  HWARO_CHECK(epoch >= 0 && epoch < 9.007199254740992e15 && epoch == std::floor(epoch),
              "LRScheduler::load_state_dict: expected last_epoch to be a non-negative integer below 2^53, found ",
              epoch);
  apply_epoch(static_cast<std::int64_t>(epoch));
}

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  HWARO_CHECK(step_size > 0, "StepLR: expected step_size > 0, found ", step_size);
  apply();
}

double StepLR::lr_at(std::int64_t epoch, double base_lr) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  HWARO_CHECK(T_max > 0, "CosineAnnealingLR: expected T_max > 0, found ", T_max);
  HWARO_CHECK(eta_min >= 0, "CosineAnnealingLR: expected eta_min >= 0, found ", eta_min);
  apply();
}

double CosineAnnealingLR::lr_at(std::int64_t epoch, double base_lr) const {
  const double phase = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(t_max_);
  return eta_min_ + (base_lr - eta_min_) * (1 + std::cos(phase)) / 2;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start,
                       double div_factor, double final_div_factor, bool cycle_momentum, double base_momentum,
                       double max_momentum)
    : LRScheduler(optimizer),
      max_lr_(max_lr),
      total_steps_(total_steps),
      pct_start_(pct_start),
      initial_lr_(max_lr / div_factor),
      min_lr_(max_lr / div_factor / final_div_factor),
      cycle_momentum_(cycle_momentum),
      base_momentum_(base_momentum),
      max_momentum_(max_momentum) {
  HWARO_CHECK(max_lr > 0, "OneCycleLR: expected max_lr > 0, found ", max_lr);
  HWARO_CHECK(total_steps > 1, "OneCycleLR: expected total_steps > 1, found ", total_steps);
  HWARO_CHECK(pct_start > 0 && pct_start < 1, "OneCycleLR: expected pct_start in (0, 1), found ", pct_start);
  HWARO_CHECK(div_factor > 0 && final_div_factor > 0, "OneCycleLR: expected div_factor and final_div_factor > 0, ",
              "found ", div_factor, " and ", final_div_factor);
  HWARO_CHECK(pct_start * static_cast<double>(total_steps) - 1 > 0, "OneCycleLR: pct_start * total_steps must ",
              "exceed 1 so the warm-up phase has a step, found ", pct_start * static_cast<double>(total_steps));
  if (cycle_momentum) {
    HWARO_CHECK(0 <= base_momentum && base_momentum <= max_momentum && max_momentum < 1, "OneCycleLR: expected ",
                "0 <= base_momentum <= max_momentum < 1, found ", base_momentum, " and ", max_momentum);
    for (const ParamGroup& group : optimizer.param_groups()) {
      HWARO_CHECK(group.momentum.has_value(), "OneCycleLR: the optimizer must support momentum or beta1 with ",
                  "cycle_momentum enabled; pass cycle_momentum = false");
    }
  }
  // As PyTorch's, the cycle's start replaces any initial_lr: the schedule is set by max_lr alone.
  for (ParamGroup& group : optimizer.param_groups()) group.initial_lr = initial_lr_;
  apply();
}

std::pair<bool, double> OneCycleLR::phase(std::int64_t epoch) const {
  // As PyTorch's: last_epoch == total_steps is allowed (the last step() of a loop of total_steps
  // iterations) and extrapolates the annealing phase; only the step after it is refused.
  HWARO_CHECK(epoch <= total_steps_, "OneCycleLR: stepped ", epoch, " times but total_steps is ", total_steps_,
              "; raise total_steps");
  const double warm_end = pct_start_ * static_cast<double>(total_steps_) - 1;
  const double last = static_cast<double>(total_steps_ - 1);
  const double e = static_cast<double>(epoch);
  if (e <= warm_end) return {true, e / warm_end};
  return {false, (e - warm_end) / (last - warm_end)};
}

namespace {
// Cosine annealing from start (pct 0) to end (pct 1).
double anneal(double start, double end, double pct) {
  return end + (start - end) / 2 * (1 + std::cos(std::numbers::pi * pct));
}
}  // namespace

double OneCycleLR::lr_at(std::int64_t epoch, double /*base_lr*/) const {
  const auto [warming_up, pct] = phase(epoch);
  return warming_up ? anneal(initial_lr_, max_lr_, pct) : anneal(max_lr_, min_lr_, pct);
}

std::optional<double> OneCycleLR::momentum_at(std::int64_t epoch) const {
  if (!cycle_momentum_) return std::nullopt;
  const auto [warming_up, pct] = phase(epoch);
  return warming_up ? anneal(max_momentum_, base_momentum_, pct) : anneal(base_momentum_, max_momentum_, pct);
}

}  // namespace hwaro::optim
