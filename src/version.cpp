#include "hwaro/version.h"

#include <string>

#include "cpu/blas_threads.h"

namespace hwaro {

std::string version() { return HWARO_VERSION; }

BuildInfo build_info() {
  BuildInfo info;
  info.version = HWARO_VERSION;
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "g++ " __VERSION__;
#endif
  info.build_type = HWARO_BUILD_TYPE;
#ifdef HWARO_WITH_CUDA
  info.cuda_built = true;
  info.cuda_version = HWARO_CUDA_VERSION;
#endif
  info.blas = std::string(cpu::blas_config()) + " (core " + cpu::blas_core_name() + ")";
  return info;
}

}  // namespace hwaro
