#pragma once
// The per-element update rules of the fused optimiser kernels (torch.optim's formulas), shared by
// the CPU loop and the CUDA kernel so that both backends compute the same thing in the same order.
#include <cmath>

#include "hwaro/macros.h"
#include "kernels/binary_math.h"

namespace hwaro::kernels {

// Adam and AdamW for one element, in the compute type C. Scalars precomputed per step:
//   step_size = lr / (1 - beta1^t), inv_sqrt_bias2 = 1 / sqrt(1 - beta2^t),
//   l2 = weight_decay for Adam (added to the gradient), param_scale = 1 - lr * weight_decay for AdamW;
//   maximize: the gradient is negated before anything else (torch's maximize).
template <typename C> struct AdamScalars {
  C step_size, beta1, beta2, eps, inv_sqrt_bias2, l2, param_scale;
  bool maximize;
};

template <typename C>
HWARO_HOST_DEVICE inline void adam_update(C& p, C g, C& m, C& v, C* v_max, const AdamScalars<C>& s) {
  if (s.maximize) g = -g;
  if (s.l2 != C(0)) g += s.l2 * p;  // only with decay, as torch's: 0 * inf would make an inf parameter NaN
  p *= s.param_scale;
  m = s.beta1 * m + (C(1) - s.beta1) * g;
  v = s.beta2 * v + (C(1) - s.beta2) * g * g;
  C second = v;
  if (v_max != nullptr) {
    *v_max = maximum(*v_max, v);  // NaN-propagating, as the composite step's torch.maximum
    second = *v_max;
  }
  p -= s.step_size * m / (std::sqrt(second) * s.inv_sqrt_bias2 + s.eps);
}

// One parameter's AdamScalars from the launch's scalars (OpId::AdamStep: beta1, beta2, eps, l2,
// param_scale; maximize) and the parameter's own (step_size, inv_sqrt_bias2).
template <typename C, typename S>
HWARO_HOST_DEVICE inline AdamScalars<C> adam_scalars(const S* group, bool maximize, const S* own) {
  return {C(own[0]), C(group[0]), C(group[1]), C(group[2]), C(own[1]), C(group[3]), C(group[4]), maximize};
}

// SGD for one element: g = -g with maximize; g += wd * p; with momentum, buf = g on the first
// step, else buf = momentum * buf + (1 - dampening) * g; the step uses buf (nesterov: g + momentum * buf).
template <typename C> struct SgdScalars {
  C lr, momentum, dampening, weight_decay;
  bool has_momentum, first_step, nesterov, maximize;
};

template <typename C> HWARO_HOST_DEVICE inline void sgd_update(C& p, C g, C* buf, const SgdScalars<C>& s) {
  if (s.maximize) g = -g;
  if (s.weight_decay != C(0)) g += s.weight_decay * p;  // as adam_update's l2
  if (s.has_momentum) {
    *buf = s.first_step ? g : s.momentum * *buf + (C(1) - s.dampening) * g;
    g = s.nesterov ? g + s.momentum * *buf : *buf;
  }
  p -= s.lr * g;
}

// One parameter's SgdScalars from the launch's (OpId::SgdStep: lr, momentum, dampening,
// weight_decay; nesterov, maximize) and the parameter's own (first step), given whether it has a buffer.
template <typename C, typename S>
HWARO_HOST_DEVICE inline SgdScalars<C> sgd_scalars(const S* group, bool nesterov, bool maximize, const S* own,
                                                   bool has_momentum) {
  return {C(group[0]), C(group[1]), C(group[2]), C(group[3]), has_momentum, own[0] != S(0), nesterov, maximize};
}

}  // namespace hwaro::kernels
