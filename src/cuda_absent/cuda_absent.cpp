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

void empty_cache() {}
std::size_t memory_allocated(int) { return 0; }
std::size_t memory_reserved(int) { return 0; }
std::size_t max_memory_allocated(int) { return 0; }
std::size_t max_memory_reserved(int) { return 0; }
void reset_peak_memory_stats(int) {}
std::string memory_summary(int) { return "no CUDA memory to summarise: " + unavailable_reason() + "\n"; }

}  // namespace hwaro::cuda
