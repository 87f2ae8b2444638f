#include "blas_core_check.h"

#include <array>
#include <fstream>
#include <sstream>

#include "hwaro/version.h"

namespace hwaro_cli {
namespace {

bool has_flag(std::string_view flags, std::string_view flag) {
  std::istringstream words{std::string(flags)};
  for (std::string word; words >> word;) {
    if (word == flag) return true;
  }
  return false;
}

std::string cpu_flags_here() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) == 0) return line;
  }
  return "";
}

}  // namespace

std::string blas_core_from_config(std::string_view blas) {
  const std::string_view marker = "(core ";
  const auto start = blas.rfind(marker);
  if (start == std::string_view::npos) return "";
  const auto end = blas.find(')', start);
  if (end == std::string_view::npos) return "";
  return std::string(blas.substr(start + marker.size(), end - start - marker.size()));
}

std::string blas_core_warning(std::string_view core, std::string_view cpu_flags) {
  // OpenBLAS's x86-64 cores older than Haswell: none of them uses AVX2 or FMA.
  constexpr std::array<std::string_view, 8> old_cores = {"Prescott", "Core2",   "Penryn", "Dunnington",
                                                         "Nehalem",  "Atom",    "Sandybridge", "Barcelona"};
  bool old = false;
  for (const auto name : old_cores) old = old || core == name;
  if (!old) return "";
  std::string suggestion;
  if (has_flag(cpu_flags, "avx512f")) {
    suggestion = "SkylakeX";
  } else if (has_flag(cpu_flags, "avx2") && has_flag(cpu_flags, "fma")) {
    suggestion = "Haswell";
  } else {
    return "";
  }
  return "note: OpenBLAS did not recognise this CPU and uses its " + std::string(core) + " kernels, though the CPU has " +
         (suggestion == "SkylakeX" ? "AVX-512" : "AVX2") + "; CPU matmul is several times slower than it can be. Set " +
         "OPENBLAS_CORETYPE=" + suggestion + " in the environment for full speed.";
}

std::string blas_core_warning_here() {
  return blas_core_warning(blas_core_from_config(hwaro::build_info().blas), cpu_flags_here());
}

}  // namespace hwaro_cli
