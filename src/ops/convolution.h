#pragma once
// conv2d as one primitive with its own kernels (Conv2d, Conv2dBackwardInput, Conv2dBackwardWeight:
// oneDNN on the CPU for float32), used by nn::functional::conv2d where the input's backend has
// them; elsewhere convolution is im2col and a GEMM (nn/functional_conv.cpp). The window travels
// as ints = sh, sw, ph, pw, dh, dw, groups (the kernel size is the weight's).
#include "core/dim_vector.h"
#include "hwaro/tensor.h"

namespace hwaro::ops {

// True when x's device has the direct convolution kernels for x's dtype.
bool has_direct_conv2d(const Tensor& x);

// x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] or undefined; the caller has checked
// the shapes and dtypes (nn/functional_conv.cpp). Records GradOp::Conv2d.
Tensor conv2d_direct(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                     IntArrayRef dilation, std::int64_t groups);

// The gradient of conv2d_direct's input, of shape input_sizes, from grad_out and the weight.
Tensor conv2d_backward_input(const Tensor& grad_out, const Tensor& weight, IntArrayRef input_sizes, IntArrayRef ints);

// The gradients of the weight (weight_sizes) and, when with_bias, of the bias (else undefined).
struct ConvWeightGrads {
  Tensor weight, bias;
};
ConvWeightGrads conv2d_backward_weight(const Tensor& x, const Tensor& grad_out, IntArrayRef weight_sizes,
                                       bool with_bias, IntArrayRef ints);

}  // namespace hwaro::ops
