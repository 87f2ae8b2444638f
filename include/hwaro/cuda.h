#pragma once
// hw::cuda: what CUDA hardware is there (guide §2). Every function answers
// cleanly on a machine without a GPU, a driver, or a CUDA build: false and 0.
#include <cstddef>
#include <string>

namespace hwaro::cuda {

struct DeviceProperties {
  std::string name;
  std::size_t total_memory = 0;  // bytes
  int multi_processor_count = 0;
  int major = 0;  // compute capability major.minor
  int minor = 0;
};

bool is_available();
int device_count();
// Why is_available() is false ("hwaro was built without CUDA", "no NVIDIA driver: ..."); empty when it is true.
std::string unavailable_reason();
std::string get_device_name(int index = 0);
DeviceProperties get_device_properties(int index = 0);
// Whether this hwaro was compiled with the CUDA backend.
bool is_built();

}  // namespace hwaro::cuda
