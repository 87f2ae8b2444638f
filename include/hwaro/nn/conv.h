#pragma once
// Convolution and pooling layers: Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, with
// LibTorch's options (hw::nn::Conv2d(hw::nn::Conv2dOptions(1, 32, 3).padding(1))).
// Inputs are [N, C, H, W], or [C, H, W] for one image.
#include <initializer_list>
#include <memory>
#include <optional>
#include <variant>

#include "hwaro/nn/expanding_array.h"
#include "hwaro/nn/module.h"
#include "hwaro/nn/option_arg.h"
#include "hwaro/nn/padding.h"

namespace hwaro::nn {

// Conv2dOptions::padding: sizes per axis (one value or {rows, cols}) or Padding::Same / Valid, as
// LibTorch's padding_t.
using Conv2dPadding = std::variant<ExpandingArray<2>, Padding>;
// torch.nn.Conv2d's padding_mode: what the padding holds. Zeros pads inside the convolution; the
// others through functional::pad (with functional::PadMode's meaning), before a convolution
// without padding.
enum class PaddingMode { Zeros, Reflect, Replicate, Circular };

// Conv2dOptions(3, 16, 3).padding(Padding::Same).padding_mode(PaddingMode::Reflect)
struct Conv2dOptions {
  Conv2dOptions(std::int64_t in_channels, std::int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  HWARO_ARG(std::int64_t, in_channels);
  HWARO_ARG(std::int64_t, out_channels);
  HWARO_ARG(ExpandingArray<2>, kernel_size);
  HWARO_ARG(ExpandingArray<2>, stride) = 1;
  HWARO_ARG(Conv2dPadding, padding) = 0;

 public:
  // A braced pair, .padding({1, 2}), which the variant alone would not take (LibTorch has this overload too).
  auto& padding(std::initializer_list<std::int64_t> sizes) { return padding(ExpandingArray<2>(sizes)); }
  HWARO_ARG(ExpandingArray<2>, dilation) = 1;
  HWARO_ARG(std::int64_t, groups) = 1;
  HWARO_ARG(bool, bias) = true;
  HWARO_ARG(PaddingMode, padding_mode) = PaddingMode::Zeros;
};

// weight [out, in / groups, kh, kw] initialised as PyTorch's (kaiming uniform, a = sqrt(5)),
// bias [out] uniform in +-1/sqrt(fan_in), fan_in = in / groups * kh * kw.
class Conv2dImpl : public Module {
 public:
  explicit Conv2dImpl(Conv2dOptions options);
  Conv2dImpl(std::int64_t in_channels, std::int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<Conv2dImpl>(options); }

  Conv2dOptions options;
  Tensor weight, bias;
};
HWARO_MODULE(Conv2d);

struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  HWARO_ARG(ExpandingArray<2>, kernel_size);
  HWARO_ARG(ExpandingArray<2>, stride);  // defaults to the kernel size
  HWARO_ARG(ExpandingArray<2>, padding) = 0;
  HWARO_ARG(ExpandingArray<2>, dilation) = 1;
  HWARO_ARG(bool, ceil_mode) = false;  // round the output size up (functional::max_pool2d)
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(MaxPool2dOptions opts) : options(opts) {}
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<MaxPool2dImpl>(options); }

  MaxPool2dOptions options;
};
HWARO_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  HWARO_ARG(ExpandingArray<2>, kernel_size);
  HWARO_ARG(ExpandingArray<2>, stride);  // defaults to the kernel size
  HWARO_ARG(ExpandingArray<2>, padding) = 0;
  HWARO_ARG(bool, ceil_mode) = false;
  HWARO_ARG(bool, count_include_pad) = true;  // padding counts as zeros in the mean
  HWARO_ARG(std::optional<std::int64_t>, divisor_override) = std::nullopt;
};

// The mean of each window, with functional::avg_pool2d's divisor rule.
class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(AvgPool2dOptions opts) : options(opts) {}
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<AvgPool2dImpl>(options); }

  AvgPool2dOptions options;
};
HWARO_MODULE(AvgPool2d);

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> size) : output_size(size) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<AdaptiveAvgPool2dImpl>(output_size); }

  ExpandingArray<2> output_size;
};
HWARO_MODULE(AdaptiveAvgPool2d);

}  // namespace hwaro::nn
