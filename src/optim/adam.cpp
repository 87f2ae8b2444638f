// Adam and AdamW as torch.optim's (g = -grad with maximize): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
// p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). Adam adds wd * p to g; AdamW
// multiplies p by (1 - lr * wd) first. amsgrad keeps the running maximum of v.
#include <cmath>

#include "hwaro/autograd.h"
#include "hwaro/ops.h"
#include "hwaro/optim.h"
#include "ops/fused_optimizer.h"

namespace hwaro::optim {

namespace {
void check_options(const AdamOptions& o, const char* name) {
  HWARO_CHECK(o.eps >= 0.0, name, ": invalid eps ", o.eps, " (it must be >= 0)");
  HWARO_CHECK(o.beta1 >= 0.0 && o.beta1 < 1.0, name, ": invalid beta1 ", o.beta1, " (it must be in [0, 1))");
  HWARO_CHECK(o.beta2 >= 0.0 && o.beta2 < 1.0, name, ": invalid beta2 ", o.beta2, " (it must be in [0, 1))");
  HWARO_CHECK(o.weight_decay >= 0.0, name, ": invalid weight_decay ", o.weight_decay, " (it must be >= 0)");
}

// The same update op by op, for dtypes and layouts the fused kernel does not take.
void composite_step(const ops::AdamParam& a, const ops::AdamGroupScalars& s) {
  Tensor p = a.param, m = a.exp_avg, v = a.exp_avg_sq;
  Tensor g = s.maximize ? a.grad.neg() : a.grad;
  if (s.l2 != 0.0) g = g.add(p, s.l2);
  if (s.param_scale != 1.0) p.mul_(s.param_scale);
  m.mul_(s.beta1).add_(g, 1.0 - s.beta1);
  v.mul_(s.beta2).add_(g * g, 1.0 - s.beta2);
  Tensor second = v;
  if (a.max_exp_avg_sq.defined()) {
    Tensor v_max = a.max_exp_avg_sq;
    v_max.copy_(maximum(v_max, v));
    second = v_max;
  }
  const Tensor denom = (second.sqrt() * a.inv_sqrt_bias2).add(s.eps);
  p.sub_(m / denom, a.step_size);
}
}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options, false, "Adam") {}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled, const char* name)
    : Optimizer(std::move(params), options.lr, name), options_(options), decoupled_weight_decay_(decoupled) {
  check_options(options, name);
  set_default_momentum(options.beta1);
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions o)
    : Adam(std::move(params),
           {.lr = o.lr,
            .beta1 = o.beta1,
            .beta2 = o.beta2,
            .eps = o.eps,
            .weight_decay = o.weight_decay,
            .amsgrad = o.amsgrad,
            .maximize = o.maximize},
           true, "AdamW") {}

void Adam::check_state() {
  std::size_t index = 0;
  for (ParamGroup& group : param_groups()) {
    for (const Tensor& p : group.params) {
      const std::size_t i = index++;
      if (!p.grad().defined()) continue;
      const auto& state = state_of(i);
      // A state loaded in part: the fused kernel would read a missing exp_avg_sq through a null
      // pointer, and step()'s first-use branch would replace a lone exp_avg_sq with zeros.
      const bool m = state.count("exp_avg") != 0, v = state.count("exp_avg_sq") != 0, t = has_steps(i);
      HWARO_CHECK(m == v && v == t, name(), ": the state of parameter ", i, " is incomplete (exp_avg ",
                  m ? "present" : "missing", ", exp_avg_sq ", v ? "present" : "missing", ", step ",
                  t ? "present" : "missing", "); load a whole state_dict saved by this optimiser, or none");
      if (!options_.amsgrad) continue;
      HWARO_CHECK(!state.count("exp_avg") || state.count("max_exp_avg_sq"), name(),
                  ": amsgrad is on but the state of parameter ", i,
                  " has no max_exp_avg_sq (a state_dict saved without amsgrad?); load a state saved with amsgrad, "
                  "or build the optimiser with the options of the run that saved it");
    }
  }
}

void Adam::step() {
  NoGradGuard no_grad;
  const AdamOptions& o = options_;
  check_gradients();
  check_state();
  std::size_t index = 0;
  for (ParamGroup& group : param_groups()) {
    // Every parameter with a gradient, its state made on first use, then one fused launch for the group.
    std::vector<ops::AdamParam> params;
    const double beta1 = group.momentum.value_or(o.beta1);  // a scheduler may cycle it
    for (Tensor& p : group.params) {
      const std::size_t i = index++;
      if (!p.grad().defined()) continue;
      auto& state = state_of(i);
      if (!state.count("exp_avg")) {
        state["exp_avg"] = zeros_like(p);
        state["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad) state["max_exp_avg_sq"] = zeros_like(p);
      }
      const auto t = static_cast<double>(++steps_of(i));
      params.push_back({.param = p,
                        .grad = p.grad(),
                        .exp_avg = state["exp_avg"],
                        .exp_avg_sq = state["exp_avg_sq"],
                        .max_exp_avg_sq = o.amsgrad ? state["max_exp_avg_sq"] : Tensor(),
                        .step_size = group.lr / (1.0 - std::pow(beta1, t)),
                        .inv_sqrt_bias2 = 1.0 / std::sqrt(1.0 - std::pow(o.beta2, t))});
    }
    const ops::AdamGroupScalars scalars{.beta1 = beta1,
                                        .beta2 = o.beta2,
                                        .eps = o.eps,
                                        .l2 = decoupled_weight_decay_ ? 0.0 : o.weight_decay,
                                        .param_scale = decoupled_weight_decay_ ? 1.0 - group.lr * o.weight_decay : 1.0,
                                        .maximize = o.maximize};
    for (std::size_t left : ops::fused_adam_step(params, scalars)) composite_step(params[left], scalars);
  }
}

}  // namespace hwaro::optim
