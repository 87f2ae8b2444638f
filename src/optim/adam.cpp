// Adam and AdamW as torch.optim's: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
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
}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options, false, "Adam") {}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled, const char* name)
    : Optimizer(std::move(params), options.lr, name), options_(options), decoupled_weight_decay_(decoupled) {
  check_options(options, name);
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions o)
    : Adam(std::move(params),
           {.lr = o.lr, .beta1 = o.beta1, .beta2 = o.beta2, .eps = o.eps, .weight_decay = o.weight_decay,
            .amsgrad = o.amsgrad},
           true, "AdamW") {}

void Adam::step() {
  NoGradGuard no_grad;
  const AdamOptions& o = options_;
  std::size_t index = 0;
  for (ParamGroup& group : param_groups()) {
    for (Tensor& p : group.params) {
      const std::size_t i = index++;
      if (!p.grad().defined()) continue;
      const Tensor& grad = p.grad();
      auto& state = state_of(i);
      if (!state.count("exp_avg")) {
        state["exp_avg"] = zeros_like(p);
        state["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad) state["max_exp_avg_sq"] = zeros_like(p);
      }
      const std::int64_t t = ++steps_of(i);
      Tensor& m = state["exp_avg"];
      Tensor& v = state["exp_avg_sq"];
      const Tensor v_max = o.amsgrad ? state["max_exp_avg_sq"] : Tensor();
      const double bias1 = 1.0 - std::pow(o.beta1, static_cast<double>(t));
      const double bias2 = 1.0 - std::pow(o.beta2, static_cast<double>(t));
      const ops::AdamStepScalars fused{.step_size = group.lr / bias1,
                                       .beta1 = o.beta1,
                                       .beta2 = o.beta2,
                                       .eps = o.eps,
                                       .inv_sqrt_bias2 = 1.0 / std::sqrt(bias2),
                                       .l2 = decoupled_weight_decay_ ? 0.0 : o.weight_decay,
                                       .param_scale = decoupled_weight_decay_ ? 1.0 - group.lr * o.weight_decay : 1.0};
      if (ops::fused_adam_step(p, grad, m, v, v_max, fused)) continue;

      // The composite form, for dtypes and layouts the fused kernel does not take.
      Tensor g = grad;
      if (o.weight_decay != 0.0) {
        if (decoupled_weight_decay_) {
          p.mul_(fused.param_scale);
        } else {
          g = g.add(p, o.weight_decay);
        }
      }
      m.mul_(o.beta1).add_(g, 1.0 - o.beta1);
      v.mul_(o.beta2).add_(g * g, 1.0 - o.beta2);
      Tensor second = v;
      if (o.amsgrad) {
        state["max_exp_avg_sq"].copy_(maximum(v_max, v));
        second = v_max;
      }
      const Tensor denom = (second / bias2).sqrt().add(o.eps);
      p.sub_(m / denom, group.lr / bias1);
    }
  }
}

}  // namespace hwaro::optim
