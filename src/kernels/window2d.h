#pragma once
// The index math of a 2-D sliding window (convolution's im2col and col2im, max pooling), written
// once for both backends. A window of kh x kw taps, dilated by (dh, dw), slides with stride
// (sh, sw) over an input padded by (ph, pw) on each side; output position (i, j), tap (ki, kj)
// reads input row i*sh - ph + ki*dh, column j*sw - pw + kj*dw (outside the input: padding).
#include <cstdint>

#include "hwaro/macros.h"

namespace hwaro::kernels {

struct Window2d {
  std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;

  // From KernelArgs::ints, in the order OpId's comment gives.
  HWARO_HOST_DEVICE static Window2d from_ints(const std::int64_t* ints) {
    return {ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6], ints[7]};
  }
  HWARO_HOST_DEVICE std::int64_t out_height(std::int64_t h) const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  HWARO_HOST_DEVICE std::int64_t out_width(std::int64_t w) const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

// The first output index whose tap reads at or after input index 0, and one past the last that
// reads before `in`, for one axis: the range where i*s + offset lies in [0, in). May be empty.
HWARO_HOST_DEVICE inline void valid_outputs(std::int64_t offset, std::int64_t s, std::int64_t in, std::int64_t out,
                                            std::int64_t& first, std::int64_t& last) {
  first = offset >= 0 ? 0 : (-offset + s - 1) / s;
  last = in - offset <= 0 ? 0 : (in - 1 - offset) / s + 1;
  if (last > out) last = out;
  if (first > last) first = last;
}

// The value of tap (ki, kj) at output (i, j) of a [h, w] plane: the input element, or 0 in the padding.
template <typename T>
HWARO_HOST_DEVICE inline T window_tap(const T* plane, std::int64_t h, std::int64_t w, const Window2d& g,
                                      std::int64_t ki, std::int64_t kj, std::int64_t i, std::int64_t j) {
  const std::int64_t r = i * g.sh - g.ph + ki * g.dh, c = j * g.sw - g.pw + kj * g.dw;
  return (r >= 0 && r < h && c >= 0 && c < w) ? plane[r * w + c] : T(0);
}

// The sum over every (tap, output) that reads input element (r, c) of a [h, w] plane: col2im for
// one element, as a gather (no atomics). cols(tap, l) reads the column matrix of this plane.
template <typename C, typename Cols>
HWARO_HOST_DEVICE inline C col2im_element(const Cols& cols, std::int64_t r, std::int64_t c, std::int64_t oh,
                                          std::int64_t ow, const Window2d& g) {
  C sum = 0;
  for (std::int64_t ki = 0; ki < g.kh; ++ki) {
    const std::int64_t row_shift = r + g.ph - ki * g.dh;  // = i * sh
    if (row_shift < 0 || row_shift % g.sh != 0) continue;
    const std::int64_t i = row_shift / g.sh;
    if (i >= oh) continue;
    for (std::int64_t kj = 0; kj < g.kw; ++kj) {
      const std::int64_t col_shift = c + g.pw - kj * g.dw;
      if (col_shift < 0 || col_shift % g.sw != 0) continue;
      const std::int64_t j = col_shift / g.sw;
      if (j >= ow) continue;
      sum += static_cast<C>(cols(ki * g.kw + kj, i * ow + j));
    }
  }
  return sum;
}

// The maximum over the window of output (i, j) of a [h, w] plane and its index r*w + c; padding
// never wins. A NaN is the maximum, and each later NaN takes its place, so the last NaN's index
// is kept, as PyTorch's kernels (`val > maxval || isnan(val)`), and gets the gradient.
template <typename C, typename T>
HWARO_HOST_DEVICE inline void window_max(const T* plane, std::int64_t h, std::int64_t w, const Window2d& g,
                                         std::int64_t i, std::int64_t j, C& best, std::int64_t& best_index) {
  bool found = false;
  best = C(0);
  best_index = -1;
  for (std::int64_t ki = 0; ki < g.kh; ++ki) {
    const std::int64_t r = i * g.sh - g.ph + ki * g.dh;
    if (r < 0 || r >= h) continue;
    for (std::int64_t kj = 0; kj < g.kw; ++kj) {
      const std::int64_t c = j * g.sw - g.pw + kj * g.dw;
      if (c < 0 || c >= w) continue;
      const C v = static_cast<C>(plane[r * w + c]);
      if (!found || v > best || v != v) {
        best = v;
        best_index = r * w + c;
        found = true;
      }
    }
  }
}

}  // namespace hwaro::kernels
