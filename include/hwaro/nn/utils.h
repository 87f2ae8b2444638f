#pragma once
// hw::nn::utils: helpers on parameter lists, as torch.nn.utils.
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::nn::utils {

// Scales all gradients so that their joint norm is at most max_norm; returns the norm
// before clipping (computed in float64). norm_type may be INFINITY for the max-abs norm. As
// PyTorch's, a NaN gradient makes the norm NaN, and every gradient is then scaled by NaN;
// error_if_nonfinite: a NaN or infinite norm throws hw::Error instead, with no gradient changed.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every defined gradient in place to [-clip_value, clip_value] (torch.nn.utils.clip_grad_value_);
// parameters without a gradient are skipped, a NaN gradient element stays NaN. clip_value must be
// >= 0: PyTorch does not check, and a negative one would set every gradient element to clip_value
// (clamp with min > max), so here it is an hw::Error with no gradient changed.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace hwaro::nn::utils
