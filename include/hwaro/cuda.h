#pragma once
// hw::cuda: what CUDA hardware is there (guide §2). Every function answers
// cleanly on a machine without a GPU, a driver, or a CUDA build: false and 0.
#include <cstddef>
#include <string>

#include "hwaro/cuda_stream.h"  // streams, events, synchronize

namespace hwaro::cuda {

struct DeviceProperties {
  std::string name;
  std::size_t total_memory = 0;  // bytes
  int multi_processor_count = 0;
  int major = 0;  // compute capability major.minor
  int minor = 0;
  int clock_rate_khz = 0;  // the SM clock at its peak, for peak-throughput estimates
};

bool is_available();
int device_count();
// Why is_available() is false ("hwaro was built without CUDA", "no NVIDIA driver: ..."); empty when it is true.
std::string unavailable_reason();
std::string get_device_name(int index = 0);
DeviceProperties get_device_properties(int index = 0);
// Whether this hwaro was compiled with the CUDA backend.
bool is_built();

// ---- VRAM (Dev Tip 2): the caching allocator of each device ----
// device -1 means the current device. Without a usable GPU the figures are 0, empty_cache()
// does nothing and memory_summary() says so, so device-agnostic programs need no special case.
// Set HWARO_CUDA_ALLOC=native to bypass the cache (every tensor a cudaMalloc/cudaFree) for debugging.
void empty_cache();                                  // return cached, unused blocks to the driver
std::size_t memory_allocated(int device = -1);       // bytes in tensors now
std::size_t memory_reserved(int device = -1);        // bytes held from the driver (allocated + cached)
std::size_t max_memory_allocated(int device = -1);   // peak of memory_allocated since the last reset
std::size_t max_memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
std::string memory_summary(int device = -1);         // a readable table

// ---- Matmul precision (torch.backends.cuda.matmul.allow_tf32) ----
// Whether float32 matmuls on CUDA may use TF32 tensor cores (10-bit mantissa products, float32
// accumulation): several times faster on Ampere and later, with a relative error near 1e-3
// instead of float32's 1e-6. Off by default, as in PyTorch. Process-wide and thread-safe; it takes
// effect for matmuls issued after the call. Float16, bfloat16 and float64 are unaffected.
namespace matmul {
void set_allow_tf32(bool allow);
bool allow_tf32();
}  // namespace matmul

}  // namespace hwaro::cuda
