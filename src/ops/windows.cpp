// The Window of ops/windows.h, and im2col, col2im and max_pool2d_with_indices: argument checks,
// output shapes, dispatch. The window's parameters travel to the kernel as ints = kh, kw, sh, sw,
// ph, pw, dh, dw.
#include <array>
#include <string>

#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"
#include "ops/windows.h"

namespace hwaro {
namespace ops {

DimVector Window::ints() const {
  return {kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]};
}

void Window::to_args(KernelArgs& args) const {
  const DimVector v = ints();
  for (std::size_t i = 0; i < v.size(); ++i) args.ints[i] = v[i];
}

std::int64_t Window::out_size(int axis, std::int64_t in, bool ceil_mode) const {
  const std::int64_t span = in + 2 * padding[axis] - dilated_kernel(axis);
  if (span < 0) return 0;
  if (!ceil_mode) return span / stride[axis] + 1;
  std::int64_t out = (span + stride[axis] - 1) / stride[axis] + 1;
  if ((out - 1) * stride[axis] >= in + padding[axis]) --out;  // that window would start in the trailing padding
  return out;
}

namespace {
// One value for both axes or one per axis, each at least `min`.
WindowPair expand_pair(const char* op, const char* what, IntArrayRef v, std::int64_t min) {
  HWARO_CHECK(v.size() == 1 || v.size() == 2, op, ": ", what, " must be one value or two (rows, cols), got ",
              v.size(), " values ", v);
  const WindowPair p = v.size() == 1 ? WindowPair{v[0], v[0]} : WindowPair{v[0], v[1]};
  HWARO_CHECK(p[0] >= min && p[1] >= min, op, ": ", what, " must be at least ", min, ", got ", v);
  return p;
}
}  // namespace

Window make_window(const char* op, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                   IntArrayRef stride) {
  return {expand_pair(op, "kernel_size", kernel_size, 1), expand_pair(op, "stride", stride, 1),
          expand_pair(op, "padding", padding, 0), expand_pair(op, "dilation", dilation, 1)};
}

WindowPair output_size(const char* op, const Window& g, std::int64_t h, std::int64_t w, bool ceil_mode) {
  const WindowPair out{g.out_size(0, h, ceil_mode), g.out_size(1, w, ceil_mode)};
  HWARO_CHECK(out[0] > 0 && out[1] > 0, op, ": the input of ", h, "x", w, " (padded by ", g.padding[0], ", ",
              g.padding[1], ") is smaller than the dilated kernel of ", g.dilated_kernel(0), "x", g.dilated_kernel(1),
              "; the output would be ", out[0], "x", out[1], "; use a smaller kernel, more padding or a larger input");
  return out;
}

}  // namespace ops

namespace {

using ops::Window;
using Pair = ops::WindowPair;
using ops::expand_pair;
using ops::make_window;
using ops::output_size;

void check_image_batch(const char* op, const char* name, const Tensor& x) {
  ops::check_defined(op, {{name, x}});
  HWARO_CHECK(x.dim() == 4, op, ": expected ", name, " of 4 dimensions [N, C, H, W], got ", x.dim(), "-D of shape ",
              x.sizes(), "; add a batch dimension with unsqueeze(0) for a single image");
  HWARO_CHECK(x.is_floating_point(), op, ": expected a floating point ", name, ", got ", x.dtype(),
              "; convert it with .to(hw::kFloat32)");
}

// A kernel needs the last dim of cols with stride 1; other dims may be strided.
Tensor unit_last_stride(const Tensor& t) { return t.stride(-1) == 1 || t.size(-1) == 1 ? t : t.contiguous(); }

// The primitive behind col2im (and im2col's gradient): no checks beyond the ones callers made.
Tensor col2im_unchecked(const Tensor& cols, std::int64_t channels, std::int64_t h, std::int64_t w, const Window& g) {
  ops::GradScope grad({&cols});
  const Tensor in = unit_last_stride(cols);
  Tensor x = ops::new_tensor({cols.size(0), channels, h, w}, cols.dtype(), cols.device());
  KernelArgs args;
  args.tensors[0] = ops::view_of(x);
  args.tensors[1] = ops::view_of(in);
  args.num_tensors = 2;
  g.to_args(args);
  ops::launch(OpId::Col2im, cols.dtype(), cols.device(), args);
  if (grad.active()) {
    DimVector ints = g.ints();
    ints.push_back(h);
    ints.push_back(w);
    grad.record(x, {.kind = ops::GradOp::Col2im, .inputs = {cols}, .ints = std::move(ints)});
  }
  return x;
}

Tensor im2col_unchecked(const Tensor& x, const Window& g, const Pair& out) {
  ops::GradScope grad({&x});
  const Tensor in = x.contiguous();
  const std::int64_t n = x.size(0), taps = x.size(1) * g.kernel[0] * g.kernel[1], l = out[0] * out[1];
  // Laid out [taps, N, L] and seen as [N, taps, L]: convolution multiplies it as one
  // [taps, N*L] matrix, so the GEMM covers the whole batch at once without a copy.
  const Tensor buffer = ops::new_tensor({taps, n, l}, x.dtype(), x.device());
  Tensor cols = ops::make_view(buffer, {n, taps, l}, {l, n * l, 1}, 0);
  KernelArgs args;
  args.tensors[0] = ops::view_of(cols);
  args.tensors[1] = ops::view_of(in);
  args.num_tensors = 2;
  g.to_args(args);
  ops::launch(OpId::Im2col, x.dtype(), x.device(), args);
  if (grad.active()) {
    DimVector ints = g.ints();
    ints.push_back(x.size(2));
    ints.push_back(x.size(3));
    grad.record(cols, {.kind = ops::GradOp::Im2col, .inputs = {x}, .ints = std::move(ints)});
  }
  return cols;
}

}  // namespace

Tensor im2col(const Tensor& x, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  check_image_batch("im2col", "input", x);
  const Window g = make_window("im2col", kernel_size, dilation, padding, stride);
  return im2col_unchecked(x, g, output_size("im2col", g, x.size(2), x.size(3)));
}

Tensor col2im(const Tensor& cols, IntArrayRef output_size_hw, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  ops::check_defined("col2im", {{"input", cols}});
  HWARO_CHECK(cols.dim() == 3, "col2im: expected input of 3 dimensions [N, C*kh*kw, L], got shape ", cols.sizes());
  HWARO_CHECK(cols.is_floating_point(), "col2im: expected a floating point input, got ", cols.dtype());
  const Window g = make_window("col2im", kernel_size, dilation, padding, stride);
  const Pair hw_size = expand_pair("col2im", "output_size", output_size_hw, 1);
  const std::int64_t taps = g.kernel[0] * g.kernel[1];
  HWARO_CHECK(cols.size(1) % taps == 0, "col2im: input's dimension 1 (", cols.size(1),
              ") must be divisible by the number of kernel taps ", g.kernel[0], "*", g.kernel[1], " = ", taps);
  const Pair out = output_size("col2im", g, hw_size[0], hw_size[1]);
  HWARO_CHECK(cols.size(2) == out[0] * out[1], "col2im: input has ", cols.size(2), " columns but an output of ",
              hw_size[0], "x", hw_size[1], " with this window has ", out[0], "x", out[1], " = ", out[0] * out[1],
              " window positions");
  return col2im_unchecked(cols, cols.size(1) / taps, hw_size[0], hw_size[1], g);
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  check_image_batch(op, "input", x);
  const Window g = make_window(op, kernel_size, dilation, padding, stride.empty() ? kernel_size : stride);
  for (int axis = 0; axis < 2; ++axis) {
    HWARO_CHECK(g.padding[axis] <= g.kernel[axis] / 2, op, ": padding should be at most half of the kernel size, got ",
                "padding ", g.padding[axis], " for kernel size ", g.kernel[axis]);
  }
  const Pair out = output_size(op, g, x.size(2), x.size(3), ceil_mode);
  // Every window must hold one real element, or its maximum (and gradient target) is undefined.
  for (int axis = 0; axis < 2; ++axis) {
    const std::int64_t in = x.size(2 + axis);
    for (std::int64_t i = 0; i < out[axis]; ++i) {
      bool any = false;
      for (std::int64_t k = 0; k < g.kernel[axis] && !any; ++k) {
        const std::int64_t at = i * g.stride[axis] - g.padding[axis] + k * g.dilation[axis];
        any = at >= 0 && at < in;
      }
      HWARO_CHECK(any, op, ": the window at output ", axis == 0 ? "row " : "column ", i,
                  " lies entirely in the padding (dilation ", g.dilation[axis], " skips the input); use less padding");
    }
  }
  ops::GradScope grad({&x});
  const Tensor in = x.contiguous();
  Tensor values = ops::new_tensor({x.size(0), x.size(1), out[0], out[1]}, x.dtype(), x.device());
  Tensor indices = ops::new_tensor(values.sizes(), kInt64, x.device());
  KernelArgs args;
  args.tensors[0] = ops::view_of(values);
  args.tensors[1] = ops::view_of(indices);
  args.tensors[2] = ops::view_of(in);
  args.num_tensors = 3;
  g.to_args(args);
  ops::launch(OpId::MaxPool2d, x.dtype(), x.device(), args);
  if (grad.active()) grad.record(values, {.kind = ops::GradOp::MaxPool2d, .inputs = {x}, .saved = {indices}});
  return {values, indices};
}

namespace ops {
// For the gradient rules: the same primitives with the window given as GradCall ints
// (kh, kw, sh, sw, ph, pw, dh, dw, H, W), already checked by the forward.
Tensor im2col_from_ints(const Tensor& x, IntArrayRef ints) {
  const Window g{{ints[0], ints[1]}, {ints[2], ints[3]}, {ints[4], ints[5]}, {ints[6], ints[7]}};
  return im2col_unchecked(x, g, {g.out_size(0, ints[8]), g.out_size(1, ints[9])});
}
Tensor col2im_from_ints(const Tensor& cols, IntArrayRef ints) {
  const Window g{{ints[0], ints[1]}, {ints[2], ints[3]}, {ints[4], ints[5]}, {ints[6], ints[7]}};
  return col2im_unchecked(cols, cols.size(1) / (ints[0] * ints[1]), ints[8], ints[9], g);
}
}  // namespace ops

}  // namespace hwaro
