#pragma once
// For benchmarks with a CPU and a CUDA row of the same workload.
#include <benchmark/benchmark.h>

#include "hwaro/hwaro.h"

namespace hwaro::bench {

// A CUDA row on a machine without a GPU is skipped with CUDA's reason; true when skipped.
inline bool skip_without(benchmark::State& state, Device device) {
  if (device.is_cpu() || cuda::is_available()) return false;
  state.SkipWithError(("no GPU: " + cuda::unavailable_reason()).c_str());
  return true;
}

// Waits for the device's queued work, so that a timed iteration includes it (GPU ops are asynchronous).
inline void sync(Device device) {
  if (device.is_cuda()) cuda::synchronize();
}

}  // namespace hwaro::bench
