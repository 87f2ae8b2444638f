#pragma once
// Padding::Same's split along one axis, shared by functional::conv2d and Conv2d: dilation *
// (kernel - 1) in all, the odd one after, as PyTorch's _conv_forward pads.
#include <cstdint>

namespace hwaro::nn::detail {

struct AxisPad {
  std::int64_t before, after;
};

inline AxisPad same_padding(std::int64_t kernel, std::int64_t dilation) {
  const std::int64_t total = dilation * (kernel - 1);
  return {total / 2, total - total / 2};
}

}  // namespace hwaro::nn::detail
