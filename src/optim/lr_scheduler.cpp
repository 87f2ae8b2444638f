// Learning-rate schedulers in closed form: lr is a function of last_epoch and each
// group's base lr, so loading last_epoch from a checkpoint restores the schedule exactly.
#include <cmath>
#include <limits>
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
  for (std::size_t i = 0; i < groups.size(); ++i) lrs.push_back(lr_at(epoch, i));
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

double StepLR::lr_at(std::int64_t epoch, std::size_t group) const {
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  HWARO_CHECK(T_max > 0, "CosineAnnealingLR: expected T_max > 0, found ", T_max);
  HWARO_CHECK(eta_min >= 0, "CosineAnnealingLR: expected eta_min >= 0, found ", eta_min);
  apply();
}

double CosineAnnealingLR::lr_at(std::int64_t epoch, std::size_t group) const {
  const double phase = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(t_max_);
  return eta_min_ + (base_lrs_[group] - eta_min_) * (1 + std::cos(phase)) / 2;
}

namespace {

// The cycle's length, as PyTorch's: total_steps where given, else epochs * steps_per_epoch.
std::int64_t cycle_steps(const OneCycleLROptions& o) {
  if (o.total_steps) {
    HWARO_CHECK(*o.total_steps > 1, "OneCycleLR: expected total_steps > 1, found ", *o.total_steps);
    return *o.total_steps;
  }
  HWARO_CHECK(o.epochs && o.steps_per_epoch, "OneCycleLR: give total_steps, or epochs and steps_per_epoch");
  const std::int64_t epochs = *o.epochs, per_epoch = *o.steps_per_epoch;
  HWARO_CHECK(epochs > 0 && per_epoch > 0, "OneCycleLR: expected epochs > 0 and steps_per_epoch > 0, found ", epochs,
              " and ", per_epoch);
  HWARO_CHECK(epochs <= std::numeric_limits<std::int64_t>::max() / per_epoch, "OneCycleLR: epochs * steps_per_epoch (",
              epochs, " * ", per_epoch, ") overflows int64");
  HWARO_CHECK(epochs * per_epoch > 1, "OneCycleLR: expected epochs * steps_per_epoch > 1, found ", epochs * per_epoch);
  return epochs * per_epoch;
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start,
                       double div_factor, double final_div_factor, bool cycle_momentum, double base_momentum,
                       double max_momentum)
    : OneCycleLR(optimizer, OneCycleLROptions{.max_lr = {max_lr},
                                              .total_steps = total_steps,
                                              .pct_start = pct_start,
                                              .cycle_momentum = cycle_momentum,
                                              .base_momentum = base_momentum,
                                              .max_momentum = max_momentum,
                                              .div_factor = div_factor,
                                              .final_div_factor = final_div_factor}) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, OneCycleLROptions o)
    : LRScheduler(optimizer),
      total_steps_(cycle_steps(o)),
      linear_(o.anneal_strategy == "linear"),
      cycle_momentum_(o.cycle_momentum) {
  HWARO_CHECK(o.anneal_strategy == "cos" || o.anneal_strategy == "linear",
              "OneCycleLR: anneal_strategy must be \"cos\" or \"linear\", found \"", o.anneal_strategy, "\"");
  auto& groups = optimizer.param_groups();
  HWARO_CHECK(o.max_lr.size() == 1 || o.max_lr.size() == groups.size(), "OneCycleLR: expected one max_lr, or one ",
              "for each of the ", groups.size(), " parameter groups, found ", o.max_lr.size());
  for (double max_lr : o.max_lr) HWARO_CHECK(max_lr > 0, "OneCycleLR: expected max_lr > 0, found ", max_lr);
  HWARO_CHECK(o.pct_start > 0 && o.pct_start < 1, "OneCycleLR: expected pct_start in (0, 1), found ", o.pct_start);
  HWARO_CHECK(o.div_factor > 0 && o.final_div_factor > 0, "OneCycleLR: expected div_factor and final_div_factor > 0, ",
              "found ", o.div_factor, " and ", o.final_div_factor);
  const double total = static_cast<double>(total_steps_);
  // The ends of the phases, as PyTorch computes them; each phase must have a step, else its pct
  // divides by zero.
  const double warm_end = o.pct_start * total - 1, down_end = 2 * o.pct_start * total - 2, last = total - 1;
  HWARO_CHECK(warm_end > 0, "OneCycleLR: pct_start * total_steps must exceed 1 so the warm-up phase has a step, ",
              "found ", o.pct_start * total);
  HWARO_CHECK(!o.three_phase || down_end < last, "OneCycleLR: with three_phase, 2 * pct_start * total_steps - 2 ",
              "(the end of the second phase) must be below total_steps - 1 so the third phase has a step, found ",
              down_end, " and ", last, "; lower pct_start");
  if (o.cycle_momentum) {
    HWARO_CHECK(0 <= o.base_momentum && o.base_momentum <= o.max_momentum && o.max_momentum < 1,
                "OneCycleLR: expected 0 <= base_momentum <= max_momentum < 1, found ", o.base_momentum, " and ",
                o.max_momentum);
    for (const ParamGroup& group : groups) {
      HWARO_CHECK(group.momentum.has_value(), "OneCycleLR: the optimizer must support momentum or beta1 with ",
                  "cycle_momentum enabled; pass cycle_momentum = false");
    }
  }
  const double low = o.base_momentum, high = o.max_momentum;
  if (o.three_phase) {
    phases_ = {{warm_end, kInitialLr, kMaxLr, high, low},
               {down_end, kMaxLr, kInitialLr, low, high},
               {last, kInitialLr, kMinLr, high, high}};
  } else {
    phases_ = {{warm_end, kInitialLr, kMaxLr, high, low}, {last, kMaxLr, kMinLr, low, high}};
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double max_lr = o.max_lr[o.max_lr.size() == 1 ? 0 : g];
    const double initial_lr = max_lr / o.div_factor;
    lrs_.push_back({initial_lr, max_lr, initial_lr / o.final_div_factor});
    // As PyTorch's, the cycle's start replaces any initial_lr: the schedule is set by max_lr alone.
    groups[g].initial_lr = initial_lr;
  }
  apply();
}

std::pair<const OneCycleLR::Phase*, double> OneCycleLR::phase(std::int64_t epoch) const {
  // As PyTorch's: last_epoch == total_steps is allowed (the last step() of a loop of total_steps
  // iterations) and extrapolates the last phase; only the step after it is refused.
  HWARO_CHECK(epoch <= total_steps_, "OneCycleLR: stepped ", epoch, " times but total_steps is ", total_steps_,
              "; raise total_steps");
  const double e = static_cast<double>(epoch);
  double start = 0;
  std::size_t i = 0;
  for (; i + 1 < phases_.size() && e > phases_[i].end_step; ++i) start = phases_[i].end_step;
  return {&phases_[i], (e - start) / (phases_[i].end_step - start)};
}

double OneCycleLR::anneal(double from, double to, double pct) const {
  if (linear_) return (to - from) * pct + from;
  return to + (from - to) / 2 * (1 + std::cos(std::numbers::pi * pct));
}

double OneCycleLR::lr_at(std::int64_t epoch, std::size_t group) const {
  const auto [p, pct] = phase(epoch);
  return anneal(lrs_[group][p->lr_from], lrs_[group][p->lr_to], pct);
}

std::optional<double> OneCycleLR::momentum_at(std::int64_t epoch) const {
  if (!cycle_momentum_) return std::nullopt;
  const auto [p, pct] = phase(epoch);
  return anneal(p->momentum_from, p->momentum_to, pct);
}

}  // namespace hwaro::optim
