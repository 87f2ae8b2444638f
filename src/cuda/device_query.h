#pragma once
// What the CUDA runtime reports about the machine, asked once and cached.
#include <string>

namespace hwaro::cuda::detail {

struct Availability {
  int device_count = 0;
  std::string reason;  // why device_count is 0 ("CUDA driver version is insufficient ..."); empty otherwise
};

// Thread-safe; a machine without a driver answers 0 with the runtime's reason, never a crash.
const Availability& availability();

}  // namespace hwaro::cuda::detail
