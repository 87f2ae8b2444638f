#pragma once
// Build facts for `hwaro info` and bug reports.
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
};
BuildInfo build_info();

}  // namespace hwaro
