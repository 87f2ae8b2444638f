#pragma once
// The dtype a composite of nn::functional computes in: float32 for the 16-bit floats, whose range
// and precision its intermediates outgrow (a norm's squared deviations past 65504, e^20 in
// softplus, a uniform draw on a grid of 2^-11), as PyTorch's CPU kernels accumulate 16-bit inputs
// in float ("opmath"); any other dtype is its own. The result goes back to the input's dtype.
#include "hwaro/dtype.h"

namespace hwaro::nn::functional {

inline DType compute_dtype(DType input) { return input == kFloat16 || input == kBFloat16 ? kFloat32 : input; }

}  // namespace hwaro::nn::functional
