#pragma once
// strided_for_each: the CPU backend's one loop over K same-shaped tensor views
// with arbitrary strides (broadcast inputs have stride 0). Dimensions are
// coalesced first (a contiguous tensor becomes one dimension), the outer range is
// split over threads, and the innermost dimension is handed to `inner` as a run:
//   inner(char* const ptrs[K], const std::int64_t byte_strides[K], std::int64_t n)
// so an op's loop body sees contiguous runs it can vectorise.
#include <array>
#include <cstdint>

#include "core/tensor_view.h"
#include "cpu/thread_pool.h"
#include "hwaro/errors.h"

namespace hwaro::cpu {

inline constexpr int kMaxLoopDims = 16;

template <int K> struct LoopShape {
  int ndim = 0;                                           // after coalescing, innermost first
  std::int64_t sizes[kMaxLoopDims] = {};
  std::int64_t strides[K][kMaxLoopDims] = {};             // bytes
};

template <int K> LoopShape<K> make_loop_shape(const TensorView* const views[K]) {
  const TensorView& first = *views[0];
  HWARO_CHECK(first.ndim <= kMaxLoopDims, "tensors of more than ", kMaxLoopDims,
              " dimensions are not supported by CPU kernels (got ", first.ndim, ")");
  LoopShape<K> shape;
  // Innermost first; size-1 dims dropped.
  for (int d = first.ndim - 1; d >= 0; --d) {
    if (first.sizes[d] == 1) continue;
    const int i = shape.ndim++;
    shape.sizes[i] = first.sizes[d];
    for (int k = 0; k < K; ++k) {
      shape.strides[k][i] = views[k]->strides[d] * static_cast<std::int64_t>(element_size(views[k]->dtype));
    }
  }
  // Merge dim i+1 (outer) into dim i when every tensor steps through them as one.
  int out = 0;
  for (int i = 1; i < shape.ndim; ++i) {
    bool mergeable = true;
    for (int k = 0; k < K; ++k) mergeable &= shape.strides[k][i] == shape.strides[k][out] * shape.sizes[out];
    if (mergeable) {
      shape.sizes[out] *= shape.sizes[i];
    } else {
      ++out;
      shape.sizes[out] = shape.sizes[i];
      for (int k = 0; k < K; ++k) shape.strides[k][out] = shape.strides[k][i];
    }
  }
  if (shape.ndim > 0) shape.ndim = out + 1;
  if (shape.ndim == 0) {  // a single element
    shape.ndim = 1;
    shape.sizes[0] = 1;
    for (int k = 0; k < K; ++k) shape.strides[k][0] = 0;
  }
  return shape;
}

template <int K, typename Inner>
void strided_for_each(const TensorView* const views[K], Inner&& inner, std::int64_t grain = kElementwiseGrain) {
  if (views[0]->numel() == 0) return;
  const LoopShape<K> shape = make_loop_shape<K>(views);
  const std::int64_t inner_size = shape.sizes[0];
  std::int64_t outer_size = 1;
  for (int i = 1; i < shape.ndim; ++i) outer_size *= shape.sizes[i];
  std::array<char*, K> base;
  for (int k = 0; k < K; ++k) base[k] = static_cast<char*>(views[k]->data);
  std::array<std::int64_t, K> inner_strides;
  for (int k = 0; k < K; ++k) inner_strides[k] = shape.strides[k][0];

  if (outer_size == 1) {  // one run, split over threads along the inner dimension
    parallel_for(0, inner_size, grain, [&](std::int64_t b, std::int64_t e) {
      std::array<char*, K> p;
      for (int k = 0; k < K; ++k) p[k] = base[k] + b * inner_strides[k];
      inner(p.data(), inner_strides.data(), e - b);
    });
    return;
  }
  const std::int64_t rows_grain = std::max<std::int64_t>(1, grain / std::max<std::int64_t>(inner_size, 1));
  parallel_for(0, outer_size, rows_grain, [&](std::int64_t row_begin, std::int64_t row_end) {
    // Multi-index of row_begin over the outer dims.
    std::int64_t index[kMaxLoopDims] = {};
    std::int64_t rest = row_begin;
    for (int i = 1; i < shape.ndim; ++i) {
      index[i] = rest % shape.sizes[i];
      rest /= shape.sizes[i];
    }
    std::array<char*, K> p;
    for (int k = 0; k < K; ++k) {
      p[k] = base[k];
      for (int i = 1; i < shape.ndim; ++i) p[k] += index[i] * shape.strides[k][i];
    }
    for (std::int64_t row = row_begin; row < row_end; ++row) {
      inner(p.data(), inner_strides.data(), inner_size);
      // Advance the odometer.
      for (int i = 1; i < shape.ndim; ++i) {
        for (int k = 0; k < K; ++k) p[k] += shape.strides[k][i];
        if (++index[i] < shape.sizes[i]) break;
        for (int k = 0; k < K; ++k) p[k] -= shape.strides[k][i] * shape.sizes[i];
        index[i] = 0;
      }
    }
  });
}

}  // namespace hwaro::cpu
