#include "hwaro/version.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "cpu/blas_threads.h"
#include "cpu_model_name.h"
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

namespace detail {
std::string cpu_model_name(std::istream& cpuinfo) {
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    const auto start = colon == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}
}  // namespace detail

HostInfo host_info() {
  HostInfo info;
  std::ifstream cpuinfo("/proc/cpuinfo");
  info.cpu_model = detail::cpu_model_name(cpuinfo);
  // hardware_concurrency() is 0 where it cannot tell; at least this thread runs.
  info.logical_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return info;
}

}  // namespace hwaro
