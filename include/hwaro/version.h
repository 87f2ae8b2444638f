#pragma once
// Build and host facts for `hwaro info` and bug reports.
#include <string>

namespace hwaro {

std::string version();  // "0.1.0"
// One line per fact: compiler, build type, CUDA on/off and its version, BLAS.
struct BuildInfo {
  std::string version;
  std::string compiler;
  std::string build_type;
  bool cuda_built = false;
  std::string cuda_version;  // e.g. "13.0"; empty without CUDA
  std::string blas;          // e.g. "OpenBLAS 0.3.21 (Haswell)"
  // The GPU libraries' versions hwaro was compiled against ("12.9.1"); empty without CUDA, and
  // cuDNN's and NCCL's empty where the build did not find them.
  std::string cublas_version;
  std::string cudnn_version;
  std::string nccl_version;
};
BuildInfo build_info();

// The host hwaro runs on, for `hwaro info` and benchmark reports.
struct HostInfo {
  std::string cpu_model;  // from /proc/cpuinfo; "unknown" where it is not readable
  int logical_cores = 0;  // what the OS offers this process
};
HostInfo host_info();

}  // namespace hwaro
