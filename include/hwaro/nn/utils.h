#pragma once
// hw::nn::utils: helpers on parameter lists, as torch.nn.utils.
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::nn::utils {

// Scales all gradients so that their joint norm is at most max_norm; returns the norm
// before clipping (computed in float64). norm_type may be INFINITY for the max-abs norm. As
// PyTorch's, a NaN gradient makes the norm NaN, and every gradient is then scaled by NaN.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0);

}  // namespace hwaro::nn::utils
