// SGD as torch.optim.SGD: g = grad + wd * p; with momentum, b = mu * b + (1 - dampening) * g
// (b = g at the first step), and g = b, or g + mu * b with nesterov; p -= lr * g.
#include "hwaro/autograd.h"
#include "hwaro/ops.h"
#include "hwaro/optim.h"
#include "ops/fused_optimizer.h"

namespace hwaro::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options) : Optimizer(std::move(params), options.lr, "SGD"),
                                                            options_(options) {
  HWARO_CHECK(options.momentum >= 0.0, "SGD: invalid momentum ", options.momentum, " (it must be >= 0)");
  HWARO_CHECK(options.weight_decay >= 0.0, "SGD: invalid weight_decay ", options.weight_decay, " (it must be >= 0)");
  HWARO_CHECK(!options.nesterov || (options.momentum > 0.0 && options.dampening == 0.0),
              "SGD: nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  std::size_t index = 0;
  for (ParamGroup& group : param_groups()) {
    for (Tensor& p : group.params) {
      const std::size_t i = index++;
      if (!p.grad().defined()) continue;
      const Tensor& grad = p.grad();
      Tensor buffer;
      bool first_step = false;
      if (options_.momentum != 0.0) {
        auto& state = state_of(i);
        auto it = state.find("momentum_buffer");
        first_step = it == state.end();
        if (first_step) it = state.emplace("momentum_buffer", empty_like(p)).first;  // the step sets it to g
        buffer = it->second;
      }
      const ops::SgdStepScalars fused{.lr = group.lr,
                                      .momentum = options_.momentum,
                                      .dampening = options_.dampening,
                                      .weight_decay = options_.weight_decay,
                                      .first_step = first_step,
                                      .nesterov = options_.nesterov};
      if (ops::fused_sgd_step(p, grad, buffer, fused)) continue;

      // The composite form, for dtypes and layouts the fused kernel does not take.
      Tensor g = grad;
      if (options_.weight_decay != 0.0) g = g.add(p, options_.weight_decay);
      if (buffer.defined()) {
        if (first_step) {
          buffer.copy_(g);
        } else {
          buffer.mul_(options_.momentum).add_(g, 1.0 - options_.dampening);
        }
        g = options_.nesterov ? g.add(buffer, options_.momentum) : buffer;
      }
      p.sub_(g, group.lr);
    }
  }
}

}  // namespace hwaro::optim
