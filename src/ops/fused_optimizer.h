#pragma once
// The fused optimiser steps (OpId::AdamStep, OpId::SgdStep) for hw::optim: one kernel per parameter
// updates it and its state in place. Each returns false, having done nothing, when the fused kernel
// does not apply (a dtype other than float32/float64, a non-contiguous tensor, tensors of different
// dtypes or devices, or no kernel on that backend); the optimiser then takes its composite path.
#include "hwaro/tensor.h"

namespace hwaro::ops {

struct AdamStepScalars {
  double step_size, beta1, beta2, eps, inv_sqrt_bias2, l2, param_scale;  // see kernels/optimizer_math.h
};
// max_exp_avg_sq undefined: no amsgrad.
bool fused_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                     const Tensor& max_exp_avg_sq, const AdamStepScalars& scalars);

struct SgdStepScalars {
  double lr, momentum, dampening, weight_decay;
  bool first_step, nesterov;
};
// momentum_buffer undefined: no momentum.
bool fused_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
                    const SgdStepScalars& scalars);

}  // namespace hwaro::ops
