#pragma once
// multi_tensor_apply: one kernel launch over many tensors (the fused optimiser steps run every
// parameter of a group this way, as PyTorch's fused Adam does, instead of a launch per parameter).
//
//   multi_tensor_apply<T>(args, f);   args.tuples: the items (KernelArgs), all of dtype T
//   f: a functor with `__device__ void operator()(const TupleBatch<T>& batch, int item, std::int64_t i) const`,
//      called once for every element i of every item.
//
// The items' pointers, lengths and own scalars travel in the kernel's parameters (up to
// kTuplesPerLaunch items, about 17 KB: CUDA 12.1 and Volta or newer take up to 32 KB), so there
// is nothing to copy to the device first. Each item gets ceil(numel / kElementsPerBlock) blocks;
// a block finds its item by binary search over the items' first blocks. A group of more than
// kTuplesPerLaunch parameters takes one launch per kTuplesPerLaunch.
#include <cstdint>

#include "core/kernel_args.h"
#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {

inline constexpr int kTuplesPerLaunch = 256;
inline constexpr std::int64_t kElementsPerBlock = 4 * kBlockSize;

template <typename T> struct TupleBatch {
  T* data[kTuplesPerLaunch][kMaxKernelTensors];
  std::int64_t numel[kTuplesPerLaunch];
  T scalars[kTuplesPerLaunch][2];
  std::int32_t first_block[kTuplesPerLaunch + 1];  // item k owns blocks [first_block[k], first_block[k + 1])
  int count;
};

// __grid_constant__: the batch is read in place from the parameter space, never copied per thread.
template <typename T, typename F> __global__ void multi_tensor_kernel(const __grid_constant__ TupleBatch<T> batch, F f) {
  const auto block = static_cast<std::int32_t>(blockIdx.x);
  int lo = 0, hi = batch.count - 1;  // the last item whose first block is <= block
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (batch.first_block[mid] <= block) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const std::int64_t begin = static_cast<std::int64_t>(block - batch.first_block[lo]) * kElementsPerBlock;
  const std::int64_t end = begin + kElementsPerBlock < batch.numel[lo] ? begin + kElementsPerBlock : batch.numel[lo];
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) f(batch, lo, i);
}

template <typename T, typename F> void multi_tensor_apply(const KernelArgs& args, F f) {
  if (args.num_tuples == 0) return;
  set_device_of(args);
  TupleBatch<T> batch{};
  std::int64_t blocks = 0;
  const auto flush = [&] {
    batch.first_block[batch.count] = static_cast<std::int32_t>(blocks);
    if (blocks > 0) {
      multi_tensor_kernel<T, F><<<static_cast<unsigned>(blocks), kBlockSize, 0, stream_of(args)>>>(batch, f);
      HWARO_CUDA_CHECK_LAUNCH();
    }
    batch.count = 0;
    blocks = 0;
  };
  for (std::int64_t item = 0; item < args.num_tuples; ++item) {
    const TensorTuple& t = args.tuples[item];
    if (t.numel == 0) continue;
    const std::int64_t item_blocks = (t.numel + kElementsPerBlock - 1) / kElementsPerBlock;
    HWARO_CHECK(item_blocks < INT32_MAX, "multi_tensor_apply: a tensor of ", t.numel, " elements is too large");
    if (batch.count == kTuplesPerLaunch || blocks + item_blocks >= INT32_MAX) flush();
    const int k = batch.count++;
    for (int j = 0; j < kMaxKernelTensors; ++j) batch.data[k][j] = static_cast<T*>(t.data[j]);
    batch.numel[k] = t.numel;
    batch.scalars[k][0] = static_cast<T>(t.scalars[0]);
    batch.scalars[k][1] = static_cast<T>(t.scalars[1]);
    batch.first_block[k] = static_cast<std::int32_t>(blocks);
    blocks += item_blocks;
  }
  flush();
}

}  // namespace hwaro::cuda
