#pragma once
// What every CUDA kernel wrapper does around its launch: run on the device of its
// output, enqueue on the stream the op was given, and check the launch.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/kernel_args.h"
#include "core/stream.h"
#include "cuda/cuda_check.h"

namespace hwaro::cuda {

// The stream an op enqueues on (the caller's current stream of the output's device).
inline cudaStream_t stream_of(const KernelArgs& args) {
  return args.stream != nullptr ? static_cast<cudaStream_t>(args.stream->native_handle()) : nullptr;
}

// Makes the output's device current; launches go to the current device.
inline void set_device_of(const KernelArgs& args) { HWARO_CUDA_CHECK(cudaSetDevice(args[0].device.index())); }

// Blocks of kBlockSize threads covering n elements, each thread handling items_per_thread.
inline constexpr int kBlockSize = 256;
inline unsigned grid_for(std::int64_t n, int items_per_thread = 1) {
  const std::int64_t per_block = static_cast<std::int64_t>(kBlockSize) * items_per_thread;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace hwaro::cuda

// After every <<<...>>> launch: a bad configuration is reported here, with the file and line,
// not at some later unrelated call.
#define HWARO_CUDA_CHECK_LAUNCH() HWARO_CUDA_CHECK(cudaGetLastError())
