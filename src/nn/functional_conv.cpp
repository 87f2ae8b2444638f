// functional: conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d, composed from the window
// primitives (im2col, col2im, max_pool2d_with_indices) and matmul, so that their gradients come
// from those primitives' rules.
//
// conv2d is im2col and one GEMM over the whole batch: im2col's columns are laid out as a
// [C*kh*kw, N*L] matrix, so weight [out, C*kh*kw] @ columns is one OpenBLAS (CPU) or cuBLAS
// (CUDA) call per group, not one per image. Where the input's backend has a direct convolution
// (ops/convolution.h: oneDNN on the CPU for float32, cuDNN on CUDA where the build found it)
// that runs instead, forward and backward, as LibTorch's convolutions do.
#include <algorithm>
#include <vector>

#include "hwaro/nn/functional.h"
#include "hwaro/ops.h"
#include "ops/op_helpers.h"
#include "nn/same_padding.h"
#include "ops/convolution.h"
#include "ops/windows.h"

namespace hwaro::nn::functional {
namespace {

// As PyTorch's expand_param_if_needed: one value for both dims or one per dim, no more.
std::vector<std::int64_t> one_value_or_two(IntArrayRef v, const char* what) {
  HWARO_CHECK(v.size() == 1 || v.size() == 2, "conv2d: expected ", what, " to be a single integer value or a list ",
              "of 2 values to match the convolution dimensions, but got ", what, "=", v);
  return {v[0], v.size() > 1 ? v[1] : v[0]};
}

// A single image [C, H, W] is run as a batch of one and returned without the batch dim.
template <typename F> Tensor batched(const char* op, const Tensor& x, F&& f) {
  HWARO_CHECK(x.defined(), op, ": input is an undefined tensor");
  HWARO_CHECK(x.dim() == 3 || x.dim() == 4, op, ": expected input of 3 dimensions [C, H, W] or 4 [N, C, H, W], got ",
              x.dim(), "-D of shape ", x.sizes());
  return x.dim() == 3 ? f(x.unsqueeze(0)).squeeze(0) : f(x);
}

Tensor conv2d_batch(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                    IntArrayRef padding, IntArrayRef dilation, std::int64_t groups) {
  HWARO_CHECK(weight.defined() && weight.dim() == 4, "conv2d: expected weight of 4 dimensions [out, in / groups, kh, kw], got ",
              weight.defined() ? weight.sizes() : IntArrayRef{});
  HWARO_CHECK(groups >= 1, "conv2d: groups must be positive, got ", groups);
  const std::int64_t n = x.size(0), c = x.size(1), out = weight.size(0);
  HWARO_CHECK(c % groups == 0 && out % groups == 0, "conv2d: input channels (", c, ") and output channels (", out,
              ") must both be divisible by groups (", groups, ")");
  if (groups == 1) {
    HWARO_CHECK(weight.size(1) == c, "conv2d: weight has ", weight.size(1), " input channels but input has ", c,
                " (input ", x.sizes(), ", weight ", weight.sizes(), "); the weight must be [out, ", c, ", kh, kw]");
  } else {
    HWARO_CHECK(weight.size(1) * groups == c, "conv2d: weight has ", weight.size(1),
                " input channels per group but input has ", c, " channels in ", groups, " groups (input ", x.sizes(),
                ", weight ", weight.sizes(), "); the weight must be [out, ", c / groups, ", kh, kw]");
  }
  HWARO_CHECK(weight.dtype() == x.dtype(), "conv2d: input has dtype ", x.dtype(), " but weight has ", weight.dtype(),
              "; convert one with .to(dtype)");
  if (bias.defined()) {
    HWARO_CHECK(bias.dim() == 1 && bias.size(0) == out, "conv2d: expected bias of shape [", out, "], got ",
                bias.sizes());
    HWARO_CHECK(bias.dtype() == x.dtype(), "conv2d: input has dtype ", x.dtype(), " but bias has ", bias.dtype());
  }
  if (ops::has_direct_conv2d(x)) return ops::conv2d_direct(x, weight, bias, stride, padding, dilation, groups);
  const std::int64_t kh = weight.size(2), kw = weight.size(3);
  const Tensor cols = im2col(x, {kh, kw}, dilation, padding, stride);  // [N, C*kh*kw, L], stored [C*kh*kw, N, L]
  const std::int64_t taps = cols.size(1), l = cols.size(2);
  const std::int64_t oh = (x.size(2) + 2 * padding[0] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
  const std::int64_t ow = l / oh;
  const Tensor matrix = cols.permute({1, 0, 2}).reshape({groups, taps / groups, n * l});  // a view
  const Tensor w = weight.reshape({groups, out / groups, taps / groups});
  const Tensor y = bmm(w, matrix).reshape({out, n, oh, ow}).permute({1, 0, 2, 3});  // [N, out, oh, ow] view
  // The bias add (or contiguous()) writes the result in NCHW order.
  return bias.defined() ? y + bias.reshape({1, out, 1, 1}) : y.contiguous();
}

// The mean along `dim` over PyTorch's adaptive windows: window i of `out` covers
// [floor(i * in / out), ceil((i + 1) * in / out)). Each window is its own mean, so that a NaN or an
// inf reaches only the windows that hold it, as in PyTorch (a product with an averaging matrix would
// spread it to every window through 0 * inf).
Tensor adaptive_mean(const Tensor& x, std::int64_t dim, std::int64_t out) {
  const std::int64_t in = x.size(dim);
  if (in % out == 0) {  // equal windows side by side: [.., in, ..] seen as [.., out, in / out, ..]
    std::vector<std::int64_t> shape = x.sizes().vec();
    shape[static_cast<std::size_t>(dim)] = in / out;
    shape.insert(shape.begin() + dim, out);
    return x.reshape(shape).mean({dim + 1});
  }
  std::vector<Tensor> windows;
  windows.reserve(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    const std::int64_t start = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
    windows.push_back(x.narrow(dim, start, end - start).mean({dim}, /*keepdim=*/true));
  }
  return cat(windows, dim);
}

// avg_pool2d's divisor of every output position, row-major [oh * ow], by PyTorch's rule: a
// window's extent is cut at the end of the padding (a ceil_mode overhang does not count), and
// without count_include_pad also at the input's edges.
std::vector<double> pool_divisors(const ops::Window& g, std::int64_t h, std::int64_t w, const ops::WindowPair& out,
                                  bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  const auto extents = [&](int axis, std::int64_t in) {
    std::vector<double> e(static_cast<std::size_t>(out[axis]));
    for (std::int64_t i = 0; i < out[axis]; ++i) {
      const std::int64_t start = i * g.stride[axis] - g.padding[axis];
      const std::int64_t end = std::min(start + g.kernel[axis], in + g.padding[axis]);
      e[static_cast<std::size_t>(i)] = static_cast<double>(
          count_include_pad ? end - start : std::min(end, in) - std::max<std::int64_t>(start, 0));
    }
    return e;
  };
  const std::vector<double> rows = extents(0, h), cols = extents(1, w);
  std::vector<double> d;
  d.reserve(rows.size() * cols.size());
  for (double r : rows) {
    for (double col : cols) d.push_back(divisor_override ? static_cast<double>(*divisor_override) : r * col);
  }
  return d;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, std::int64_t groups) {
  const std::vector<std::int64_t> s = one_value_or_two(stride, "stride"), p = one_value_or_two(padding, "padding"),
                                  d = one_value_or_two(dilation, "dilation");
  ops::check_same_device_where_defined("conv2d", {{"input", x}, {"weight", weight}, {"bias", bias}});
  return batched("conv2d", x, [&](const Tensor& x4) { return conv2d_batch(x4, weight, bias, s, p, d, groups); });
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride, Padding padding,
              IntArrayRef dilation, std::int64_t groups) {
  if (padding == Padding::Valid) return conv2d(x, weight, bias, stride, {0}, dilation, groups);
  HWARO_CHECK(std::all_of(stride.begin(), stride.end(), [](std::int64_t s) { return s == 1; }),
              "conv2d: padding Same is not supported for strided convolutions (stride ", stride,
              "), as in PyTorch; give the padding as sizes, or use stride 1");
  HWARO_CHECK(weight.defined() && weight.dim() == 4, "conv2d: expected weight of 4 dimensions [out, in / groups, kh, kw], got ",
              weight.defined() ? weight.sizes() : IntArrayRef{});
  const std::vector<std::int64_t> d = one_value_or_two(dilation, "dilation");
  const nn::detail::AxisPad rows = nn::detail::same_padding(weight.size(2), d[0]);
  const nn::detail::AxisPad cols = nn::detail::same_padding(weight.size(3), d[1]);
  if (rows.before == rows.after && cols.before == cols.after) {
    return conv2d(x, weight, bias, stride, {rows.before, cols.before}, dilation, groups);
  }
  // As PyTorch: the uneven part is padded with zeros first, then the convolution pads nothing.
  return conv2d(pad(x, {cols.before, cols.after, rows.before, rows.after}), weight, bias, stride, {0}, dilation, groups);
}

Tensor max_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return batched("max_pool2d", x, [&](const Tensor& x4) {
    return std::get<0>(max_pool2d_with_indices(x4, kernel_size, stride, padding, dilation, ceil_mode));
  });
}

Tensor avg_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  return batched("avg_pool2d", x, [&](const Tensor& x4) {
    const char* op = "avg_pool2d";
    const ops::Window g = ops::make_window(op, kernel_size, {1}, padding, stride.empty() ? kernel_size : stride);
    for (int axis = 0; axis < 2; ++axis) {
      HWARO_CHECK(g.padding[axis] <= g.kernel[axis] / 2, op, ": padding should be at most half of the kernel size, got ",
                  "padding ", g.padding[axis], " for kernel size ", g.kernel[axis]);
    }
    HWARO_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must not be zero");
    HWARO_CHECK(x4.is_floating_point(), op, ": expected a floating point input, got ", x4.dtype(),
                "; convert it with .to(hw::kFloat32)");
    const std::int64_t n = x4.size(0), c = x4.size(1), h = x4.size(2), w = x4.size(3);
    const ops::WindowPair out = ops::output_size(op, g, h, w, ceil_mode);
    // ceil_mode's last window may hang past the padding: zeros appended at the bottom and right
    // make im2col's floor-rounded window positions the same out[0] x out[1] windows.
    Tensor padded = x4;
    const TensorOptions like{.dtype = x4.dtype(), .device = x4.device()};
    const std::int64_t extra_h = (out[0] - 1) * g.stride[0] + g.kernel[0] - (h + 2 * g.padding[0]);
    const std::int64_t extra_w = (out[1] - 1) * g.stride[1] + g.kernel[1] - (w + 2 * g.padding[1]);
    if (extra_h > 0) padded = cat({padded, zeros({n, c, extra_h, w}, like)}, 2);
    if (extra_w > 0) padded = cat({padded, zeros({n, c, padded.size(2), extra_w}, like)}, 3);
    // Each channel as its own one-channel image: its columns are the windows, summed over taps.
    const Tensor sums = im2col(padded.reshape({n * c, 1, padded.size(2), padded.size(3)}), kernel_size, {1}, padding,
                               stride.empty() ? kernel_size : stride)
                            .sum({1});
    const std::vector<double> divisors = pool_divisors(g, h, w, out, count_include_pad, divisor_override);
    const bool uniform = std::all_of(divisors.begin(), divisors.end(), [&](double d) { return d == divisors[0]; });
    // The usual case divides by one number; only partial windows need a divisor per position.
    const Tensor mean = uniform ? sums / divisors[0] : sums / tensor(divisors, like);
    return mean.reshape({n, c, out[0], out[1]});
  });
}

Tensor adaptive_avg_pool2d(const Tensor& x, IntArrayRef output_size) {
  return batched("adaptive_avg_pool2d", x, [&](const Tensor& x4) {
    HWARO_CHECK(output_size.size() == 1 || output_size.size() == 2,
                "adaptive_avg_pool2d: output_size must be one value or two, got ", output_size);
    const std::int64_t oh = output_size[0], ow = output_size.size() > 1 ? output_size[1] : output_size[0];
    HWARO_CHECK(oh >= 1 && ow >= 1, "adaptive_avg_pool2d: output_size must be positive, got ", output_size);
    HWARO_CHECK(x4.is_floating_point(), "adaptive_avg_pool2d: expected a floating point input, got ", x4.dtype());
    HWARO_CHECK(x4.size(2) >= 1 && x4.size(3) >= 1, "adaptive_avg_pool2d: input of shape ", x4.sizes(),
                " has an empty spatial dimension");
    // Separable: the means over each window's rows, then over its columns.
    return adaptive_mean(adaptive_mean(x4, 2, oh), 3, ow);
  });
}

}  // namespace hwaro::nn::functional
