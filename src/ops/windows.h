#pragma once
// im2col and col2im with the window as a GradCall's ints (kh, kw, sh, sw, ph, pw, dh, dw, H, W):
// each is the other's gradient, so the rules call these without re-checking what the forward checked.
#include "hwaro/tensor.h"

namespace hwaro::ops {
Tensor im2col_from_ints(const Tensor& x, IntArrayRef ints);
Tensor col2im_from_ints(const Tensor& cols, IntArrayRef ints);
}  // namespace hwaro::ops
