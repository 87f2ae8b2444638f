// Conv2d and the pooling layers: options held, forward through functional.
#include <array>
#include <cmath>
#include <sstream>
#include <string>
#include <variant>

#include "hwaro/nn/conv.h"
#include "hwaro/nn/functional.h"
#include "hwaro/nn/init.h"
#include "hwaro/ops.h"
#include "nn/same_padding.h"

namespace hwaro::nn {
namespace {

// Through a stream: GCC 12's -Wrestrict misfires on `"(" + std::to_string(...)` at -O3.
std::string pair_text(const ExpandingArray<2>& v) {
  std::ostringstream out;
  out << "(" << v[0] << ", " << v[1] << ")";
  return out.str();
}

// Conv2d's padding per axis (rows, cols): explicit sizes on both sides; none for Padding::Valid;
// Padding::Same's split for Same.
std::array<detail::AxisPad, 2> axis_pads(const Conv2dOptions& options) {
  std::array<detail::AxisPad, 2> pads{};
  for (std::size_t axis = 0; axis < 2; ++axis) {
    if (const auto* sizes = std::get_if<ExpandingArray<2>>(&options.padding())) {
      pads[axis] = {(*sizes)[axis], (*sizes)[axis]};
    } else if (std::get<Padding>(options.padding()) == Padding::Same) {
      pads[axis] = detail::same_padding(options.kernel_size()[axis], options.dilation()[axis]);
    }
  }
  return pads;
}

functional::PadMode pad_mode_of(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::Zeros: return functional::PadMode::Constant;
    case PaddingMode::Reflect: return functional::PadMode::Reflect;
    case PaddingMode::Replicate: return functional::PadMode::Replicate;
    case PaddingMode::Circular: return functional::PadMode::Circular;
  }
  return functional::PadMode::Constant;
}

const char* padding_mode_name(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::Zeros: return "zeros";
    case PaddingMode::Reflect: return "reflect";
    case PaddingMode::Replicate: return "replicate";
    case PaddingMode::Circular: return "circular";
  }
  return "unknown";
}

}  // namespace

Conv2dImpl::Conv2dImpl(Conv2dOptions opts) : options(opts) {
  const std::int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  HWARO_CHECK(in > 0 && out > 0, "Conv2d: in_channels and out_channels must be positive, got ", in, " and ", out);
  HWARO_CHECK(groups > 0 && in % groups == 0 && out % groups == 0, "Conv2d: in_channels (", in,
              ") and out_channels (", out, ") must both be divisible by groups (", groups, ")");
  const ExpandingArray<2>& k = options.kernel_size();
  HWARO_CHECK(k[0] > 0 && k[1] > 0, "Conv2d: kernel_size must be positive, got ", pair_text(k));
  const auto* padding_kind = std::get_if<Padding>(&options.padding());
  HWARO_CHECK(!padding_kind || *padding_kind != Padding::Same || (options.stride()[0] == 1 && options.stride()[1] == 1),
              "Conv2d: padding Same is not supported for strided convolutions (stride ", pair_text(options.stride()),
              "), as in PyTorch; give the padding as sizes, or use stride 1");
  weight = register_parameter("weight", empty({out, in / groups, k[0], k[1]}));
  if (options.bias()) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const auto fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  check_input_device(input);
  if (options.padding_mode() == PaddingMode::Zeros) {
    if (const auto* sizes = std::get_if<ExpandingArray<2>>(&options.padding())) {
      return functional::conv2d(input, weight, bias, options.stride(), *sizes, options.dilation(), options.groups());
    }
    return functional::conv2d(input, weight, bias, options.stride(), std::get<Padding>(options.padding()),
                              options.dilation(), options.groups());
  }
  // As PyTorch's Conv2d: pad in the padding mode first, then convolve without padding.
  const auto [rows, cols] = axis_pads(options);
  const Tensor padded = functional::pad(input, {cols.before, cols.after, rows.before, rows.after},
                                        pad_mode_of(options.padding_mode()));
  return functional::conv2d(padded, weight, bias, options.stride(), {0}, options.dilation(), options.groups());
}

std::string Conv2dImpl::extra_repr() const {
  std::ostringstream s;
  s << options.in_channels() << ", " << options.out_channels() << ", kernel_size=" << pair_text(options.kernel_size())
    << ", stride=" << pair_text(options.stride());
  if (const auto* sizes = std::get_if<ExpandingArray<2>>(&options.padding())) {
    if ((*sizes)[0] != 0 || (*sizes)[1] != 0) s << ", padding=" << pair_text(*sizes);
  } else {
    s << ", padding=" << (std::get<Padding>(options.padding()) == Padding::Same ? "same" : "valid");
  }
  if (options.dilation()[0] != 1 || options.dilation()[1] != 1) s << ", dilation=" << pair_text(options.dilation());
  if (options.groups() != 1) s << ", groups=" << options.groups();
  if (!options.bias()) s << ", bias=false";
  if (options.padding_mode() != PaddingMode::Zeros) s << ", padding_mode=" << padding_mode_name(options.padding_mode());
  return s.str();
}

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return functional::max_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                                options.ceil_mode());
}

std::string MaxPool2dImpl::extra_repr() const {
  return "kernel_size=" + pair_text(options.kernel_size()) + ", stride=" + pair_text(options.stride()) +
         ", padding=" + pair_text(options.padding()) + ", dilation=" + pair_text(options.dilation()) +
         ", ceil_mode=" + (options.ceil_mode() ? "true" : "false");
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return functional::avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                                options.count_include_pad(), options.divisor_override());
}

// PyTorch's printout names only the window; the divisor options are shown when they are not the defaults.
std::string AvgPool2dImpl::extra_repr() const {
  std::string s = "kernel_size=" + pair_text(options.kernel_size()) + ", stride=" + pair_text(options.stride()) +
                  ", padding=" + pair_text(options.padding());
  if (options.ceil_mode()) s += ", ceil_mode=true";
  if (!options.count_include_pad()) s += ", count_include_pad=false";
  if (options.divisor_override()) s += ", divisor_override=" + std::to_string(*options.divisor_override());
  return s;
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return functional::adaptive_avg_pool2d(input, output_size); }

std::string AdaptiveAvgPool2dImpl::extra_repr() const { return "output_size=" + pair_text(output_size); }

}  // namespace hwaro::nn
