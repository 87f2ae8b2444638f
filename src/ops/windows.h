#pragma once
// The sliding window shared by im2col, col2im, max pooling and the direct convolution: its
// argument checks and output size (one place, so every window op says the same thing), and
// im2col / col2im with the window as a GradCall's ints (kh, kw, sh, sw, ph, pw, dh, dw, H, W):
// each is the other's gradient, so the rules call these without re-checking what the forward checked.
#include <array>
#include <cstdint>

#include "core/dim_vector.h"
#include "core/kernel_args.h"
#include "hwaro/tensor.h"

namespace hwaro::ops {

using WindowPair = std::array<std::int64_t, 2>;  // (rows, cols)

struct Window {
  WindowPair kernel, stride, padding, dilation;

  // kh, kw, sh, sw, ph, pw, dh, dw: the order the window kernels read from KernelArgs::ints.
  DimVector ints() const;
  void to_args(KernelArgs& args) const;
  // 0 when the dilated kernel does not fit (C++ division would round a negative span up to 0).
  // ceil_mode (pooling's): the last window may hang over the bottom or right edge, as long as it
  // starts inside the input or its leading padding (PyTorch's pooling_output_shape).
  std::int64_t out_size(int axis, std::int64_t in, bool ceil_mode = false) const;
  std::int64_t dilated_kernel(int axis) const { return dilation[axis] * (kernel[axis] - 1) + 1; }
};

// The window from one value or two per parameter; hw::Error names `op` and the bad parameter.
Window make_window(const char* op, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                   IntArrayRef stride);

// The output's spatial size for an input of h x w, or hw::Error when the window does not fit.
WindowPair output_size(const char* op, const Window& g, std::int64_t h, std::int64_t w, bool ceil_mode = false);

Tensor im2col_from_ints(const Tensor& x, IntArrayRef ints);
Tensor col2im_from_ints(const Tensor& cols, IntArrayRef ints);

}  // namespace hwaro::ops
