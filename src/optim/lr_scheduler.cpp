// Learning-rate schedulers in closed form: lr is a function of last_epoch and each
// group's base lr, so loading last_epoch from a checkpoint restores the schedule exactly.
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <string_view>

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
  check_group_count();
  auto& groups = optimizer_.param_groups();
  std::vector<double> lrs;
  std::vector<std::optional<double>> momenta;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    lrs.push_back(lr_at(epoch, i));
    momenta.push_back(momentum_at(epoch, i));
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i].lr = lrs[i];
    if (momenta[i]) groups[i].momentum = *momenta[i];
  }
  last_lr_ = std::move(lrs);
  last_epoch_ = epoch;
}

void LRScheduler::check_group_count() const {
  const std::size_t groups = optimizer_.param_groups().size();
  HWARO_CHECK(groups == base_lrs_.size(), "LRScheduler: the optimiser had ", base_lrs_.size(),
              " parameter groups when the scheduler was made and has ", groups,
              " now; make the scheduler after adding groups");
}

void LRScheduler::step() { apply_epoch(last_epoch_ + 1); }

std::map<std::string, Tensor> LRScheduler::state_dict() const {
  std::map<std::string, Tensor> out = {
      {"last_epoch", scalar_tensor(static_cast<double>(last_epoch_), {.dtype = kFloat64})}};
  for (std::size_t g = 0; g < base_lrs_.size(); ++g) {
    out["base_lrs." + std::to_string(g)] = scalar_tensor(base_lrs_[g], {.dtype = kFloat64});
  }
  return out;
}

namespace {

// The state's "base_lrs.<g>" values in group order; empty where it has none (saved before hwaro
// saved them). Every group from 0 up must be there once, each key written as state_dict writes it.
std::vector<double> loaded_base_lrs(const std::map<std::string, Tensor>& state) {
  constexpr std::string_view kPrefix = "base_lrs.";
  std::map<std::size_t, double> by_group;
  for (const auto& [key, t] : state) {
    if (!key.starts_with(kPrefix)) continue;
    const std::string_view index_text = std::string_view(key).substr(kPrefix.size());
    std::size_t g = 0;
    // Written back, the index must give the key's text: no sign, no leading zero, nothing after it.
    const auto parsed = std::from_chars(index_text.data(), index_text.data() + index_text.size(), g);
    HWARO_CHECK(parsed.ec == std::errc() && std::to_string(g) == index_text,
                "LRScheduler::load_state_dict: malformed key '", key, "'; expected base_lrs.<group>");
    HWARO_CHECK(t.defined() && t.numel() == 1, "LRScheduler::load_state_dict: '", key, "' must hold one value");
    const double lr = t.item<double>();
    HWARO_CHECK(std::isfinite(lr) && lr >= 0, "LRScheduler::load_state_dict: '", key,
                "' must be a finite lr >= 0, found ", lr);
    by_group[g] = lr;
  }
  std::vector<double> out;
  for (const auto& [g, lr] : by_group) {
    HWARO_CHECK(g == out.size(), "LRScheduler::load_state_dict: the state has no base_lrs.", out.size(),
                " but has base_lrs.", g);
    out.push_back(lr);
  }
  return out;
}

}  // namespace

void LRScheduler::load_state_dict(const std::map<std::string, Tensor>& state) {
  auto it = state.find("last_epoch");
  HWARO_CHECK(it != state.end() && it->second.defined() && it->second.numel() == 1,
              "LRScheduler::load_state_dict: expected a one-element 'last_epoch' tensor, found none");
  const double epoch = it->second.item<double>();
  // Below 2^53, where a double still counts every integer and the conversion below is defined.
  HWARO_CHECK(epoch >= 0 && epoch < 9.007199254740992e15 && epoch == std::floor(epoch),
              "LRScheduler::load_state_dict: expected last_epoch to be a non-negative integer below 2^53, found ",
              epoch);
  // Another kind of scheduler's state (ReduceLROnPlateau's best, num_bad_epochs, ...) also holds
  // last_epoch; loaded here it would pass for an old state without base_lrs.
  for (const auto& [key, _] : state) {
    HWARO_CHECK(key == "last_epoch" || key.starts_with("base_lrs."), "LRScheduler::load_state_dict: the state has '",
                key, "', which an LRScheduler does not save; was it saved by another kind of scheduler?");
  }
  check_group_count();
  std::vector<double> base_lrs = loaded_base_lrs(state);
  if (base_lrs.empty()) base_lrs = base_lrs_;
  HWARO_CHECK(base_lrs.size() == base_lrs_.size(), "LRScheduler::load_state_dict: the state has base_lrs for ",
              base_lrs.size(), " parameter groups but the optimiser has ", base_lrs_.size(),
              "; was it saved for another optimiser?");
  // apply_epoch reads base_lrs_ (through lr_at), so they are set first and put back if it refuses.
  std::vector<double> previous = std::exchange(base_lrs_, std::move(base_lrs));
  try {
    apply_epoch(static_cast<std::int64_t>(epoch));
  } catch (...) {
    base_lrs_ = std::move(previous);
    throw;
  }
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
    HWARO_CHECK(*o.total_steps > 0, "OneCycleLR: expected total_steps > 0, found ", *o.total_steps);
    return *o.total_steps;
  }
  HWARO_CHECK(o.epochs && o.steps_per_epoch, "OneCycleLR: give total_steps, or epochs and steps_per_epoch");
  const std::int64_t epochs = *o.epochs, per_epoch = *o.steps_per_epoch;
  HWARO_CHECK(epochs > 0 && per_epoch > 0, "OneCycleLR: expected epochs > 0 and steps_per_epoch > 0, found ", epochs,
              " and ", per_epoch);
  HWARO_CHECK(epochs <= std::numeric_limits<std::int64_t>::max() / per_epoch, "OneCycleLR: epochs * steps_per_epoch (",
              epochs, " * ", per_epoch, ") overflows int64");
  return epochs * per_epoch;
}

// An option's value for each of `groups` groups, as PyTorch's _format_param: one value is every
// group's (hwaro's one-element list stands for PyTorch's float), else there must be one per group.
std::vector<double> per_group(const std::vector<double>& values, std::size_t groups, const char* name) {
  HWARO_CHECK(values.size() == 1 || values.size() == groups, "OneCycleLR: expected one ", name, ", or one ",
              "for each of the ", groups, " parameter groups, found ", values.size());
  return values.size() == 1 ? std::vector<double>(groups, values[0]) : values;
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start,
                       double div_factor, double final_div_factor, bool cycle_momentum, double base_momentum,
                       double max_momentum)
    : OneCycleLR(optimizer, OneCycleLROptions{.max_lr = {max_lr},
                                              .total_steps = total_steps,
                                              .pct_start = pct_start,
                                              .cycle_momentum = cycle_momentum,
                                              .base_momentum = {base_momentum},
                                              .max_momentum = {max_momentum},
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
  const std::vector<double> max_lrs = per_group(o.max_lr, groups.size(), "max_lr");
  for (double max_lr : max_lrs) HWARO_CHECK(max_lr > 0, "OneCycleLR: expected max_lr > 0, found ", max_lr);
  HWARO_CHECK(o.pct_start >= 0 && o.pct_start <= 1, "OneCycleLR: expected pct_start in [0, 1], found ", o.pct_start);
  HWARO_CHECK(o.div_factor > 0 && o.final_div_factor > 0, "OneCycleLR: expected div_factor and final_div_factor > 0, ",
              "found ", o.div_factor, " and ", o.final_div_factor);
  const double total = static_cast<double>(total_steps_);
  // The ends of the phases, as PyTorch computes them. As PyTorch's, a phase may end before the
  // previous one (a short cycle passes it by) or after the cycle (the cycle ends inside it); only a
  // step that falls in a phase of length 0 is refused, where PyTorch divides by zero (phase()).
  const double warm_end = o.pct_start * total - 1, down_end = 2 * o.pct_start * total - 2, last = total - 1;
  if (o.cycle_momentum) {
    const std::vector<double> base = per_group(o.base_momentum, groups.size(), "base_momentum");
    const std::vector<double> max = per_group(o.max_momentum, groups.size(), "max_momentum");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      // PyTorch checks neither; hwaro keeps them in [0, 1), where Adam's beta1 must be. Either may be
      // the larger (a cycle may raise the momentum with the lr).
      HWARO_CHECK(0 <= base[g] && base[g] < 1 && 0 <= max[g] && max[g] < 1,
                  "OneCycleLR: expected base_momentum and max_momentum in [0, 1), found ", base[g], " and ", max[g],
                  " for parameter group ", g);
      HWARO_CHECK(groups[g].momentum.has_value(), "OneCycleLR: the optimizer must support momentum or beta1 with ",
                  "cycle_momentum enabled; pass cycle_momentum = false");
      momenta_.push_back({base[g], max[g]});
    }
  }
  const MomentumLevel low = kBaseMomentum, high = kMaxMomentum;
  if (o.three_phase) {
    phases_ = {{warm_end, kInitialLr, kMaxLr, high, low},
               {down_end, kMaxLr, kInitialLr, low, high},
               {last, kInitialLr, kMinLr, high, high}};
  } else {
    phases_ = {{warm_end, kInitialLr, kMaxLr, high, low}, {last, kMaxLr, kMinLr, low, high}};
  }
  phase(0);  // refuses a cycle whose first step falls in a phase of length 0 before any group changes
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double max_lr = max_lrs[g];
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
  HWARO_CHECK(phases_[i].end_step != start, "OneCycleLR: step ", epoch, " falls in phase ", i + 1, " of ",
              phases_.size(), ", which starts and ends at step ", start, " (pct_start * total_steps decides ",
              "where the phases end); PyTorch divides by zero here; change pct_start or total_steps");
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

std::optional<double> OneCycleLR::momentum_at(std::int64_t epoch, std::size_t group) const {
  if (!cycle_momentum_) return std::nullopt;
  const auto [p, pct] = phase(epoch);
  return anneal(momenta_[group][p->momentum_from], momenta_[group][p->momentum_to], pct);
}

}  // namespace hwaro::optim
