#include "cuda/device_query.h"

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.h"
#include "hwaro/cuda.h"

namespace hwaro::cuda {

namespace detail {
const Availability& availability() {
  static const Availability answer = [] {
    Availability a;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      a.reason = cudaGetErrorString(status);
      cudaGetLastError();  // clear the sticky error so later calls start clean
      return a;
    }
    a.device_count = count;
    if (count == 0) a.reason = "the CUDA runtime found no device (check CUDA_VISIBLE_DEVICES)";
    return a;
  }();
  return answer;
}
}  // namespace detail

bool is_built() { return true; }
bool is_available() { return detail::availability().device_count > 0; }
int device_count() { return detail::availability().device_count; }
std::string unavailable_reason() { return detail::availability().reason; }

DeviceProperties get_device_properties(int index) {
  const int count = device_count();
  HWARO_CHECK_AS(IndexError, index >= 0 && index < count, "CUDA device ", index, " does not exist: ", count,
                 " device(s) visible", count == 0 ? " (" + unavailable_reason() + ")" : std::string());
  cudaDeviceProp prop{};
  HWARO_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  int clock_khz = 0;  // cudaDeviceProp::clockRate is gone in CUDA 13; the attribute remains
  HWARO_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  return {.name = prop.name, .total_memory = prop.totalGlobalMem, .multi_processor_count = prop.multiProcessorCount,
          .major = prop.major, .minor = prop.minor, .clock_rate_khz = clock_khz};
}

std::string get_device_name(int index) { return get_device_properties(index).name; }

}  // namespace hwaro::cuda
