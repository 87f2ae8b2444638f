#pragma once
// The fused optimiser steps (OpId::AdamStep, OpId::SgdStep) for hw::optim, multi-tensor: one
// kernel launch updates every parameter of a group and its state in place (on a GPU, one launch
// per group instead of one per parameter or, op by op, about ten per parameter). Parameters the
// fused kernel does not take (a dtype other than float32/float64, a non-contiguous tensor, tensors
// of different dtypes, devices or lengths, no kernel on that backend) are returned untouched, and
// the optimiser steps them by its composite path. A group whose parameters live on several
// devices or dtypes gets one launch for each.
#include <cstddef>
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::ops {

// One parameter of an Adam step; max_exp_avg_sq undefined: no amsgrad. Its own scalars, from its
// step count t: step_size = lr / (1 - beta1^t), inv_sqrt_bias2 = 1 / sqrt(1 - beta2^t).
struct AdamParam {
  Tensor param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq;
  double step_size, inv_sqrt_bias2;
};
// The group's scalars (kernels/optimizer_math.h): l2 = weight_decay for Adam, param_scale =
// 1 - lr * weight_decay for AdamW; maximize: the gradient is negated first.
struct AdamGroupScalars {
  double beta1, beta2, eps, l2, param_scale;
  bool maximize;
};
// Returns the indices into params of those not taken.
std::vector<std::size_t> fused_adam_step(const std::vector<AdamParam>& params, const AdamGroupScalars& scalars);

// One parameter of an SGD step; momentum_buffer undefined: no momentum. first_step: the buffer
// is new and takes the gradient as it is.
struct SgdParam {
  Tensor param, grad, momentum_buffer;
  bool first_step;
};
struct SgdGroupScalars {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};
std::vector<std::size_t> fused_sgd_step(const std::vector<SgdParam>& params, const SgdGroupScalars& scalars);

}  // namespace hwaro::ops
