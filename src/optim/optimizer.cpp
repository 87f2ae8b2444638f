#include "hwaro/optim.h"

#include <unordered_map>

#include "hwaro/autograd.h"
#include "hwaro/ops.h"

namespace hwaro::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr, const char* name) : name_(name) {
  HWARO_CHECK(!params.empty(), name, ": got an empty parameter list; pass model->parameters()");
  HWARO_CHECK(lr >= 0.0, name, ": invalid learning rate ", lr, " (it must be >= 0)");
  for (std::size_t i = 0; i < params.size(); ++i) {
    HWARO_CHECK(params[i].defined() && params[i].is_leaf(), name, ": parameter ", i,
                " is undefined or not a leaf; optimisers update leaves (model->parameters())");
  }
  // A parameter listed twice would be stepped twice, and on the GPU by two blocks of one fused
  // launch at once. PyTorch warns that this will become an error; here it is one already.
  std::unordered_map<const void*, std::size_t> first_at;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].numel() == 0) continue;
    const auto [it, fresh] = first_at.emplace(params[i].data_ptr(), i);
    HWARO_CHECK(fresh, name, ": parameters ", it->second, " and ", i,
                " are the same tensor; pass each parameter once (tied weights appear once in model->parameters())");
  }
  groups_.push_back({std::move(params), lr});
}

void Optimizer::check_gradients() const {
  std::size_t index = 0;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      const std::size_t i = index++;
      const Tensor& g = p.grad();
      if (!g.defined()) continue;
      HWARO_CHECK(g.device() == p.device() && g.dtype() == p.dtype() && g.sizes() == p.sizes(), name_,
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
    if (groups_[g].momentum) out[prefix + "momentum"] = scalar_tensor(*groups_[g].momentum, {.dtype = kFloat64});
  }
  for (const auto& [index, tensors] : state_) {
    for (const auto& [name, t] : tensors) out["state." + std::to_string(index) + "." + name] = t.detach();
  }
  for (const auto& [index, steps] : steps_) {
    out["state." + std::to_string(index) + ".step"] = scalar_tensor(steps, {.dtype = kInt64});
  }
  return out;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  NoGradGuard no_grad;
  std::size_t count = 0;
  for (const ParamGroup& group : groups_) count += group.params.size();
  for (const auto& [key, t] : state) {
    if (key.rfind("param_groups.", 0) == 0) {
      std::size_t digits = 0;
      const std::size_t g = std::stoul(key.substr(13), &digits);
      HWARO_CHECK(g < groups_.size(), "optimizer load_state_dict: '", key, "' names group ", g, " but there are ",
                  groups_.size());
      const std::string field = key.substr(13 + digits);
      if (field == ".lr") {
        groups_[g].lr = t.item<double>();
      } else {
        HWARO_CHECK(field == ".momentum" && groups_[g].momentum, "optimizer load_state_dict: unexpected key '", key,
                    "'");
        groups_[g].momentum = t.item<double>();
      }
      continue;
    }
    HWARO_CHECK(key.rfind("state.", 0) == 0, "optimizer load_state_dict: unexpected key '", key, "'");
    const std::size_t dot = key.find('.', 6);
    HWARO_CHECK(dot != std::string::npos, "optimizer load_state_dict: malformed key '", key, "'");
    const std::size_t index = std::stoul(key.substr(6, dot - 6));
    HWARO_CHECK(index < count, "optimizer load_state_dict: '", key, "' names parameter ", index, " but there are ",
                count, "; was the checkpoint made for another model?");
    const std::string name = key.substr(dot + 1);
    if (name == "step") {
      steps_[index] = t.item<std::int64_t>();
    } else {
      state_[index][name] = t.clone();
    }
  }
  // State lives with its parameter.
  std::size_t index = 0;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      auto it = state_.find(index++);
      if (it == state_.end()) continue;
      for (auto& [name, t] : it->second) t = t.to(p.device(), p.dtype());
    }
  }
}

}  // namespace hwaro::optim
