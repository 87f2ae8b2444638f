// SGD as torch.optim.SGD: g = grad (-grad with maximize) + wd * p; with momentum,
// b = mu * b + (1 - dampening) * g (b = g at the first step), and g = b, or g + mu * b with
// nesterov; p -= lr * g.
#include "hwaro/autograd.h"
#include "hwaro/ops.h"
#include "hwaro/optim.h"
#include "ops/fused_optimizer.h"

namespace hwaro::optim {
namespace {

// The same update op by op, for dtypes and layouts the fused kernel does not take.
void composite_step(const ops::SgdParam& a, const ops::SgdGroupScalars& s) {
  Tensor p = a.param;
  Tensor g = s.maximize ? a.grad.neg() : a.grad;
  if (s.weight_decay != 0.0) g = g.add(p, s.weight_decay);
  if (a.momentum_buffer.defined()) {
    Tensor buffer = a.momentum_buffer;
    if (a.first_step) {
      buffer.copy_(g);
    } else {
      buffer.mul_(s.momentum).add_(g, 1.0 - s.dampening);
    }
    g = s.nesterov ? g.add(buffer, s.momentum) : buffer;
  }
  p.sub_(g, s.lr);
}

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options) : Optimizer(std::move(params), options.lr, "SGD"),
                                                            options_(options) {
  HWARO_CHECK(options.momentum >= 0.0, "SGD: invalid momentum ", options.momentum, " (it must be >= 0)");
  HWARO_CHECK(options.weight_decay >= 0.0, "SGD: invalid weight_decay ", options.weight_decay, " (it must be >= 0)");
  HWARO_CHECK(!options.nesterov || (options.momentum > 0.0 && options.dampening == 0.0),
              "SGD: nesterov momentum requires a momentum and zero dampening");
  set_default_momentum(options.momentum);
}

void SGD::step() {
  NoGradGuard no_grad;
  check_gradients();
  std::size_t index = 0;
  for (ParamGroup& group : param_groups()) {
    // Every parameter with a gradient, its momentum buffer made on first use, then one fused launch.
    std::vector<ops::SgdParam> params;
    const double momentum = group.momentum.value_or(options_.momentum);  // a scheduler may cycle it
    for (Tensor& p : group.params) {
      const std::size_t i = index++;
      if (!p.grad().defined()) continue;
      ops::SgdParam item{.param = p, .grad = p.grad(), .momentum_buffer = {}, .first_step = false};
      if (momentum != 0.0) {
        auto& state = state_of(i);
        auto it = state.find("momentum_buffer");
        item.first_step = it == state.end();
        if (item.first_step) it = state.emplace("momentum_buffer", empty_like(p)).first;  // the step sets it to g
        item.momentum_buffer = it->second;
      }
      params.push_back(std::move(item));
    }
    const ops::SgdGroupScalars scalars{.lr = group.lr,
                                       .momentum = momentum,
                                       .dampening = options_.dampening,
                                       .weight_decay = options_.weight_decay,
                                       .nesterov = options_.nesterov,
                                       .maximize = options_.maximize};
    for (std::size_t left : ops::fused_sgd_step(params, scalars)) composite_step(params[left], scalars);
  }
}

}  // namespace hwaro::optim
