#pragma once
// hw::optim: optimisers with torch.optim's names, defaults and update rules. They see
// parameters and their gradients, never modules:
//   hw::optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});
//   opt.zero_grad(); loss.backward(); opt.step();
// Updates run without recording a graph, in place, so parameters keep their identity.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::optim {

// A set of parameters sharing hyper-parameters; lr (and momentum) is what schedulers change.
struct ParamGroup {
  std::vector<Tensor> params;
  double lr = 0.0;
  // SGD's momentum or Adam's beta1, which OneCycleLR cycles; none for an optimiser without one.
  std::optional<double> momentum = std::nullopt;
  // PyTorch's group['initial_lr']: the lr a schedule starts from. The first scheduler made on the
  // optimiser sets it (to the group's lr; OneCycleLR to max_lr / div_factor) and every scheduler
  // takes its base lr from it, so one made after load_state_dict starts from the checkpoint's.
  std::optional<double> initial_lr = std::nullopt;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update from the current gradients; parameters without a gradient are skipped.
  virtual void step() = 0;
  // set_to_none (PyTorch's default): gradients become undefined; else they are zeroed.
  void zero_grad(bool set_to_none = true);
  // Change a group's lr or momentum here; add groups with add_param_group, which checks them.
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // As torch.optim.Optimizer.add_param_group: another group, with its own lr (the optimiser's when
  // none is given) and the optimiser's momentum (or beta1); the other options are the optimiser's.
  // A parameter already in a group, or listed twice, is refused and nothing is added.
  void add_param_group(std::vector<Tensor> params, std::optional<double> lr = std::nullopt);
  // Per-parameter state as named tensors ("state.<index>.<name>") plus each group's lr, momentum
  // and initial_lr where set ("param_groups.<g>.lr", ".momentum", ".initial_lr", 0-D float64).
  std::map<std::string, Tensor> state_dict() const;
  // The loaded state replaces the current one; a group's initial_lr is the state's, or none where
  // the state has none (a checkpoint saved before any scheduler, or by an older hwaro).
  void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  Optimizer(std::vector<Tensor> params, double lr, const char* name);
  // The state tensors of parameter `index` (in order over groups), made on first use.
  std::map<std::string, Tensor>& state_of(std::size_t index) { return state_[index]; }
  std::int64_t& steps_of(std::size_t index) { return steps_[index]; }
  bool has_steps(std::size_t index) const { return steps_.count(index) != 0; }
  // Throws, naming the parameter, where a gradient differs from its parameter in device, dtype
  // or shape, or where the state of a parameter with a gradient is on another device (the model
  // was moved after the first step): step() calls it first, so that a refused step changes no
  // state at all.
  void check_gradients() const;
  const std::string& name() const { return name_; }
  // The momentum (SGD's) or beta1 (Adam's) of the first group and of every group added later.
  void set_default_momentum(double momentum);

 private:
  // Refuses an undefined or non-leaf parameter, and one listed twice among `params` and the groups.
  void check_params(const std::vector<Tensor>& params) const;
  std::string name_;
  double default_lr_;
  std::optional<double> default_momentum_;
  std::vector<ParamGroup> groups_;
  std::map<std::size_t, std::map<std::string, Tensor>> state_;
  std::map<std::size_t, std::int64_t> steps_;
};

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;  // step along the gradient (torch's maximize): the gradient is negated first
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options = {});
  void step() override;

 private:
  SGDOptions options_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // Adam: added to the gradient (L2); AdamW: decoupled decay
  bool amsgrad = false;
  bool maximize = false;  // step along the gradient (torch's maximize): the gradient is negated first
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = {});
  void step() override;

 protected:
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled, const char* name);

 private:
  // A parameter's state (from load_state_dict) holds exp_avg, exp_avg_sq and step, or none of
  // them; with amsgrad, one with state must also hold max_exp_avg_sq.
  void check_state();
  AdamOptions options_;
  bool decoupled_weight_decay_;
};

// Adam with decoupled weight decay (Loshchilov & Hutter); PyTorch's default decay 1e-2.
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options = {});
};

}  // namespace hwaro::optim
