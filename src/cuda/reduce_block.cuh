#pragma once
// Warp- and block-level combining for the CUDA reductions (reduction_kernels.cu).
//
// A block is bx * by threads (bx a power of two <= 32, bx * by = kReduceThreads), thread (tx, ty)
// owning column tx. Lanes of a warp with the same tx are bx apart, so shuffling down by 16, 8,
// ..., bx combines exactly the threads of one column; the warps' results then meet in shared
// memory. The combine order depends only on the block shape, so results are reproducible.
#include <cstdint>
#include <type_traits>

#include "kernels/reduce_ops.h"

namespace hwaro::cuda {

inline constexpr int kReduceThreads = 256;
inline constexpr int kWarpSize = 32;

template <typename T> struct IsValueIndex : std::false_type {};
template <typename T> struct IsValueIndex<kernels::ValueIndex<T>> : std::true_type {};

template <typename T> __device__ T shuffle_down(T v, int offset) {
  constexpr unsigned kAllLanes = 0xffffffffu;
  if constexpr (IsValueIndex<T>::value) {
    return {shuffle_down(v.value, offset), shuffle_down(v.index, offset)};
  } else if constexpr (sizeof(T) < sizeof(int)) {  // bool, uint8
    return static_cast<T>(__shfl_down_sync(kAllLanes, static_cast<int>(v), offset));
  } else {
    return __shfl_down_sync(kAllLanes, v, offset);
  }
}

// Combines v over the threads of each column; the column's result is valid in thread (tx, 0).
template <typename Combine, typename Acc> __device__ Acc block_reduce_columns(Acc v) {
  __shared__ Acc partials[kReduceThreads];  // one per (warp, column): at most 8 * 32
  const int bx = static_cast<int>(blockDim.x);
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int lane = t % kWarpSize, warp = t / kWarpSize;
  for (int offset = kWarpSize / 2; offset >= bx; offset /= 2) v = Combine::combine(v, shuffle_down(v, offset));
  if (lane < bx) partials[warp * bx + lane] = v;
  __syncthreads();
  if (t < bx) {
    const int warps = static_cast<int>(blockDim.x * blockDim.y) / kWarpSize;
    v = partials[t];
    for (int w = 1; w < warps; ++w) v = Combine::combine(v, partials[w * bx + t]);
  }
  return v;
}

// max/min with index on the GPU: threads see interleaved index ranges, so the shared combine
// (which needs the lower-index side first) is called in index order; index -1 marks "no element yet".
template <typename Op> struct OrderFreeExtremum {
  template <typename V> __device__ static V identity() { return V{decltype(V::value)(0), -1}; }
  template <typename V> __device__ static V combine(V a, V b) {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    return a.index <= b.index ? Op::combine(a, b) : Op::combine(b, a);
  }
};

}  // namespace hwaro::cuda
