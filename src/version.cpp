#include "hwaro/version.h"

#include <fstream>
#include <string>
#include <thread>

#include "cpu/blas_threads.h"
#include "hwaro/errors.h"

#ifdef HWARO_WITH_CUDA
#include <cublas_api.h>
#endif
#ifdef HWARO_WITH_NCCL
#include <nccl.h>
#endif
#ifdef HWARO_WITH_CUDNN
#include <cudnn_version.h>
#endif

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
  info.cublas_version = detail::str_cat(CUBLAS_VER_MAJOR, ".", CUBLAS_VER_MINOR, ".", CUBLAS_VER_PATCH);
#endif
#ifdef HWARO_WITH_NCCL
  info.nccl_version = detail::str_cat(NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH);
#endif
#ifdef HWARO_WITH_CUDNN
  info.cudnn_version = detail::str_cat(CUDNN_MAJOR, ".", CUDNN_MINOR, ".", CUDNN_PATCHLEVEL);
#endif
  info.blas = std::string(cpu::blas_config()) + " (core " + cpu::blas_core_name() + ")";
  return info;
}

HostInfo host_info() {
  HostInfo info;
  info.cpu_model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) info.cpu_model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  info.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  return info;
}

}  // namespace hwaro
