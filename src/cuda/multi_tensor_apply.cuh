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
// kTuplesPerLaunch parameters takes one launch per kTuplesPerLaunch. That division of the work
// is kernels/multi_tensor_plan.h, tested on the CPU.
#include <cstddef>
#include <cstdint>

#include "core/kernel_args.h"
#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"
#include "kernels/multi_tensor_plan.h"

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
  const int item = kernels::slot_of_block(batch.first_block, batch.count, block);
  const kernels::ElementRange range =
      kernels::block_elements(block, batch.first_block[item], batch.numel[item], kElementsPerBlock);
  for (std::int64_t i = range.begin + threadIdx.x; i < range.end; i += blockDim.x) f(batch, item, i);
}

// The most bytes of kernel arguments CUDA 12.1+ takes on Volta and newer (4 KB before).
inline constexpr std::size_t kMaxKernelArgumentBytes = 32764;

template <typename T, typename F> void multi_tensor_apply(const KernelArgs& args, F f) {
  static_assert(sizeof(TupleBatch<T>) + sizeof(F) <= kMaxKernelArgumentBytes,
                "a launch's items and functor exceed CUDA's kernel argument space: lower kTuplesPerLaunch");
  if (args.num_tuples == 0) return;
  set_device_of(args);
  for (std::int64_t item = 0; item < args.num_tuples; ++item) {
    const std::int64_t item_blocks = (args.tuples[item].numel + kElementsPerBlock - 1) / kElementsPerBlock;
    HWARO_CHECK(item_blocks <= kernels::kMaxLaunchBlocks, "multi_tensor_apply: a tensor of ",
                args.tuples[item].numel, " elements is too large");
  }
  TupleBatch<T> batch{};
  const auto add = [&](int slot, std::int64_t item, std::int64_t first_block) {
    const TensorTuple& t = args.tuples[item];
    for (int j = 0; j < kMaxKernelTensors; ++j) batch.data[slot][j] = static_cast<T*>(t.data[j]);
    batch.numel[slot] = t.numel;
    batch.scalars[slot][0] = static_cast<T>(t.scalars[0]);
    batch.scalars[slot][1] = static_cast<T>(t.scalars[1]);
    batch.first_block[slot] = static_cast<std::int32_t>(first_block);
  };
  const auto flush = [&](int slots, std::int64_t blocks) {
    batch.count = slots;
    batch.first_block[slots] = static_cast<std::int32_t>(blocks);
    multi_tensor_kernel<T, F><<<static_cast<unsigned>(blocks), kBlockSize, 0, stream_of(args)>>>(batch, f);
    HWARO_CUDA_CHECK_LAUNCH();
  };
  kernels::plan_multi_tensor_launches(
      args.num_tuples, [&](std::int64_t item) { return args.tuples[item].numel; }, kElementsPerBlock,
      kTuplesPerLaunch, add, flush);
}

}  // namespace hwaro::cuda
