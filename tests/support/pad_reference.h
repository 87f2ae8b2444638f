#pragma once
// A float64 reference of torch.nn.functional.pad as plain loops (no hwaro op used): each padded
// dim is padded one line at a time, the line's padding built from its ends by each mode's
// definition. Inputs are row-major value vectors as values_of gives them.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "hwaro/nn/functional.h"

namespace hwaro::test {

// One line padded by (before, after); a negative pad crops. Constant, reflect and replicate pad
// the whole line and then crop (PyTorch's kernels read the uncropped line); circular crops first
// and wraps what is left (PyTorch's circular padding copies from the cropped result).
inline std::vector<double> pad_line(std::vector<double> line, std::int64_t before, std::int64_t after,
                                    nn::functional::PadMode mode, double value) {
  using nn::functional::PadMode;
  const auto crop = [](std::vector<double>& v, std::int64_t front, std::int64_t back) {
    v.erase(v.begin(), v.begin() + front);
    v.erase(v.end() - back, v.end());
  };
  const std::int64_t crop_front = std::max<std::int64_t>(-before, 0), crop_back = std::max<std::int64_t>(-after, 0);
  const std::int64_t add_front = std::max<std::int64_t>(before, 0), add_back = std::max<std::int64_t>(after, 0);
  if (mode == PadMode::Circular) {
    crop(line, crop_front, crop_back);
    std::vector<double> out(line.end() - add_front, line.end());  // the last add_front elements come first
    out.insert(out.end(), line.begin(), line.end());
    out.insert(out.end(), line.begin(), line.begin() + add_back);  // then the first add_back
    return out;
  }
  const std::int64_t n = static_cast<std::int64_t>(line.size());
  const auto at = [&](std::int64_t i) { return line[static_cast<std::size_t>(i)]; };
  std::vector<double> out;
  for (std::int64_t i = add_front; i >= 1; --i) {  // position -i
    out.push_back(mode == PadMode::Constant ? value : mode == PadMode::Reflect ? at(i) : at(0));
  }
  out.insert(out.end(), line.begin(), line.end());
  for (std::int64_t i = 1; i <= add_back; ++i) {  // position n - 1 + i
    out.push_back(mode == PadMode::Constant ? value : mode == PadMode::Reflect ? at(n - 1 - i) : at(n - 1));
  }
  crop(out, crop_front, crop_back);
  return out;
}

struct PaddedValues {
  std::vector<double> values;
  std::vector<std::int64_t> sizes;
};

// values of shape `sizes` padded by `pad`'s (before, after) pairs, the last dim's first.
inline PaddedValues ref_pad(std::vector<double> values, std::vector<std::int64_t> sizes,
                            const std::vector<std::int64_t>& pad, nn::functional::PadMode mode, double value = 0.0) {
  for (std::size_t i = 0; i < pad.size() / 2; ++i) {
    const std::size_t dim = sizes.size() - 1 - i;
    std::int64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < dim; ++d) outer *= sizes[d];
    for (std::size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
    const std::int64_t n = sizes[dim], padded_n = n + pad[2 * i] + pad[2 * i + 1];
    std::vector<double> next(static_cast<std::size_t>(outer * padded_n * inner));
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t in = 0; in < inner; ++in) {
        std::vector<double> line;
        for (std::int64_t k = 0; k < n; ++k) line.push_back(values[static_cast<std::size_t>((o * n + k) * inner + in)]);
        const std::vector<double> padded = pad_line(line, pad[2 * i], pad[2 * i + 1], mode, value);
        for (std::int64_t k = 0; k < padded_n; ++k) {
          next[static_cast<std::size_t>((o * padded_n + k) * inner + in)] = padded[static_cast<std::size_t>(k)];
        }
      }
    }
    values = std::move(next);
    sizes[dim] = padded_n;
  }
  return {values, sizes};
}

}  // namespace hwaro::test
