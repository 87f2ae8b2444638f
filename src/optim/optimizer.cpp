#include "hwaro/optim.h"

#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "hwaro/autograd.h"
#include "hwaro/ops.h"

namespace hwaro::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr, const char* name) : name_(name), default_lr_(lr) {
  HWARO_CHECK(!params.empty(), name, ": got an empty parameter list; pass model->parameters()");
  HWARO_CHECK(lr >= 0.0, name, ": invalid learning rate ", lr, " (it must be >= 0)");
  check_params(params);
  groups_.push_back({std::move(params), lr});
}

// Parameters are numbered over all groups, in order, as in state_dict's keys.
void Optimizer::check_params(const std::vector<Tensor>& params) const {
  // A parameter listed twice would be stepped twice, and on the GPU by two blocks of one fused
  // launch at once. PyTorch warns that this will become an error; here it is one already.
  std::unordered_map<const void*, std::size_t> first_at;
  std::size_t existing = 0;  // the parameters already in groups, which were checked when added
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      if (p.numel() != 0) first_at.emplace(p.data_ptr(), existing);
      ++existing;
    }
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    HWARO_CHECK(params[i].defined() && params[i].is_leaf(), name_, ": parameter ", existing + i,
                " is undefined or not a leaf; optimisers update leaves (model->parameters())");
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].numel() == 0) continue;
    const auto [it, fresh] = first_at.emplace(params[i].data_ptr(), existing + i);
    HWARO_CHECK(fresh, name_, ": parameters ", it->second, " and ", existing + i,
                " are the same tensor; pass each parameter once (tied weights appear once in model->parameters())");
  }
}

void Optimizer::add_param_group(std::vector<Tensor> params, std::optional<double> lr) {
  const double group_lr = lr.value_or(default_lr_);
  HWARO_CHECK(group_lr >= 0.0, name_, ".add_param_group: invalid learning rate ", group_lr, " (it must be >= 0)");
  check_params(params);
  groups_.push_back({std::move(params), group_lr, default_momentum_});
}

void Optimizer::set_default_momentum(double momentum) {
  default_momentum_ = momentum;
  groups_[0].momentum = momentum;
}

void Optimizer::check_gradients() const {
  std::size_t index = 0;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      const std::size_t i = index++;
      const Tensor& g = p.grad();
      if (!g.defined()) continue;
      HWARO_CHECK_AS(DeviceMismatchError, g.device() == p.device(), name_, ".step(): the gradient of parameter ", i,
                     " is on ", g.device(), " but the parameter is on ", p.device(),
                     "; a gradient must be on its parameter's device (nothing was updated)");
      // The state made by earlier steps stays where it was made when the model is moved afterwards.
      if (const auto state = state_.find(i); state != state_.end()) {
        for (const auto& [field, t] : state->second) {
          HWARO_CHECK_AS(DeviceMismatchError, !t.defined() || t.device() == p.device(), name_, ".step(): the state '",
                         field, "' of parameter ", i, " is on ", t.device(), " but the parameter is on ", p.device(),
                         " (the model was moved after the optimiser's first step); move the model before the first "
                         "step, or load the optimiser's state_dict() again after the move, which puts each state on "
                         "its parameter's device (nothing was updated)");
        }
      }
      HWARO_CHECK(g.dtype() == p.dtype() && g.sizes() == p.sizes(), name_,
                  ".step(): the gradient of parameter ", i, " is ", g.dtype(), " ", g.sizes(), " on ", g.device(),
                  " but the parameter is ", p.dtype(), " ", p.sizes(), " on ", p.device(),
                  "; a gradient must match its parameter (nothing was updated)");
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& group : groups_) {
    for (Tensor& p : group.params) {
      Tensor& g = p.mutable_grad();
      if (!g.defined()) continue;
      if (set_to_none) {
        g = Tensor();
      } else {
        g.zero_();
      }
    }
  }
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> out;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    out[prefix + "lr"] = scalar_tensor(groups_[g].lr, {.dtype = kFloat64});
    // The group's size, as PyTorch's param_groups[g]['params'] lists its parameters: a state saved
    // from groups of other sizes is refused, where its state.<index> keys would land on other tensors.
    out[prefix + "num_params"] = scalar_tensor(static_cast<std::int64_t>(groups_[g].params.size()), {.dtype = kInt64});
    if (groups_[g].momentum) out[prefix + "momentum"] = scalar_tensor(*groups_[g].momentum, {.dtype = kFloat64});
    if (groups_[g].initial_lr) out[prefix + "initial_lr"] = scalar_tensor(*groups_[g].initial_lr, {.dtype = kFloat64});
  }
  for (const auto& [index, tensors] : state_) {
    for (const auto& [name, t] : tensors) out["state." + std::to_string(index) + "." + name] = t.detach();
  }
  for (const auto& [index, steps] : steps_) {
    out["state." + std::to_string(index) + ".step"] = scalar_tensor(steps, {.dtype = kInt64});
  }
  return out;
}

namespace {

// The decimal index at the front of `text` (as in "3.exp_avg" or "0.lr"), and what follows it;
// a key without one, or with one too large for size_t, is refused with the whole key named.
std::pair<std::size_t, std::string_view> leading_index(std::string_view text, const std::string& key) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  HWARO_CHECK(ec == std::errc() && end != text.data(), "optimizer load_state_dict: malformed key '", key,
              "'; expected state.<index>.<name> or param_groups.<index>.<field>");
  return {value, text.substr(static_cast<std::size_t>(end - text.data()))};
}

// A one-element tensor's value as a double, refusing any other shape.
double single_value(const Tensor& t, const std::string& key) {
  HWARO_CHECK(t.defined() && t.numel() == 1, "optimizer load_state_dict: '", key, "' must hold one value, found ",
              t.defined() ? t.numel() : 0);
  return t.item<double>();
}

}  // namespace

// Like PyTorch's, the loaded state replaces the current one: a parameter the checkpoint has no
// state for starts fresh. Everything is checked before anything changes, so a refused state dict
// leaves the optimiser as it was.
void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  NoGradGuard no_grad;
  std::vector<const Tensor*> params;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) params.push_back(&p);
  }
  std::vector<double> lrs;
  std::vector<std::optional<double>> momenta;
  std::vector<std::optional<double>> initial_lrs(groups_.size());  // replaced: none unless the state has one
  for (const ParamGroup& group : groups_) {
    lrs.push_back(group.lr);
    momenta.push_back(group.momentum);
  }
  std::map<std::size_t, std::map<std::string, Tensor>> new_state;
  std::map<std::size_t, std::int64_t> new_steps;
  std::size_t groups_with_lr = 0;
  for (const auto& [key, t] : state) {
    const std::string_view k = key;
    if (k.starts_with("param_groups.")) {
      const auto [g, field] = leading_index(k.substr(13), key);
      HWARO_CHECK(g < groups_.size(), "optimizer load_state_dict: '", key, "' names group ", g, " but there are ",
                  groups_.size());
      if (field == ".lr") {
        lrs[g] = single_value(t, key);
        ++groups_with_lr;
      } else if (field == ".num_params") {
        const double count = single_value(t, key);
        HWARO_CHECK(count == static_cast<double>(groups_[g].params.size()),
                    "optimizer load_state_dict: the loaded state's parameter group ", g, " has ", count,
                    " parameters but the optimizer's has ", groups_[g].params.size(),
                    "; build the optimizer with the same parameter groups as the run that saved it");
      } else if (field == ".initial_lr") {
        initial_lrs[g] = single_value(t, key);
      } else {
        HWARO_CHECK(field == ".momentum" && momenta[g], "optimizer load_state_dict: unexpected key '", key, "'");
        momenta[g] = single_value(t, key);
      }
      continue;
    }
    HWARO_CHECK(k.starts_with("state."), "optimizer load_state_dict: unexpected key '", key, "'");
    const auto [index, rest] = leading_index(k.substr(6), key);
    HWARO_CHECK(rest.size() > 1 && rest[0] == '.', "optimizer load_state_dict: malformed key '", key, "'");
    HWARO_CHECK(index < params.size(), "optimizer load_state_dict: '", key, "' names parameter ", index,
                " but there are ", params.size(), "; was the checkpoint made for another model?");
    const std::string name(rest.substr(1));
    const Tensor& p = *params[index];
    if (name == "step") {
      const double steps = single_value(t, key);
      HWARO_CHECK(steps >= 0 && steps < 9.007199254740992e15 && steps == std::floor(steps),
                  "optimizer load_state_dict: '", key, "' must be a non-negative integer, found ", steps);
      new_steps[index] = static_cast<std::int64_t>(steps);
    } else {
      // Every per-parameter state tensor (momentum_buffer, exp_avg, ...) has its parameter's shape.
      HWARO_CHECK(t.defined() && t.sizes() == p.sizes() && is_floating_point(t.dtype()),
                  "optimizer load_state_dict: '", key, "' is ", t.defined() ? t.dtype() : p.dtype(), " ",
                  t.defined() ? t.sizes() : IntArrayRef{}, " but parameter ", index, " is ", p.dtype(), " ",
                  p.sizes(), "; was the checkpoint made for another model?");
      new_state[index][name] = t.to(p.device(), p.dtype()).clone();  // state lives with its parameter
    }
  }
  // Every group's lr is saved (state_dict), so a state with fewer is from an optimiser with fewer groups.
  HWARO_CHECK(groups_with_lr == groups_.size(), "optimizer load_state_dict: the loaded state has ", groups_with_lr,
              " parameter groups but the optimizer has ", groups_.size(),
              "; build the optimizer with the same parameter groups as the run that saved it");
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].lr = lrs[g];
    groups_[g].momentum = momenta[g];
    groups_[g].initial_lr = initial_lrs[g];
  }
  state_ = std::move(new_state);
  steps_ = std::move(new_steps);
}

}  // namespace hwaro::optim
