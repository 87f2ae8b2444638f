// hw::cuda's answers in a build without the CUDA backend (HWARO_CUDA=OFF or no nvcc).
#include "hwaro/cuda.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {

bool is_built() { return false; }
bool is_available() { return false; }
int device_count() { return 0; }
std::string unavailable_reason() { return "hwaro was built without CUDA (HWARO_CUDA=OFF or no nvcc at build time)"; }
std::string get_device_name(int index) { return get_device_properties(index).name; }
DeviceProperties get_device_properties(int index) {
  throw IndexError(detail::str_cat("CUDA device ", index, " does not exist: ", unavailable_reason()));
}

}  // namespace hwaro::cuda
