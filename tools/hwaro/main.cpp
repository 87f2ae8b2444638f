// The hwaro command: info (guide §2). train and bench come with their issues.
#include <cstring>
#include <iostream>

#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

int info() {
  const hw::BuildInfo build = hw::build_info();
  std::cout << "hwaro " << build.version << " (" << build.build_type << ", " << build.compiler << ")\n";
  std::cout << "CUDA backend built: " << (build.cuda_built ? "yes, CUDA " + build.cuda_version : "no") << "\n";
  if (hw::cuda::is_available()) {
    std::cout << "CUDA available: yes, " << hw::cuda::device_count() << " device(s)\n";
    for (int i = 0; i < hw::cuda::device_count(); ++i) {
      const auto p = hw::cuda::get_device_properties(i);
      std::cout << "  cuda:" << i << "  " << p.name << ", " << (p.total_memory >> 20) << " MiB, "
                << p.multi_processor_count << " SMs, compute capability " << p.major << "." << p.minor << "\n";
    }
  } else {
    std::cout << "CUDA available: no (" << hw::cuda::unavailable_reason() << ")\n";
  }
  std::cout << "CPU threads: " << hw::get_num_threads() << "\n";
  std::cout << "BLAS: " << build.blas << "\n";
  std::cout << "default device: " << hw::default_device() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::strcmp(argv[1], "info") == 0) return info();
    std::cerr << "usage: hwaro info\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hwaro: error: " << e.what() << "\n";
    return 1;
  }
}
