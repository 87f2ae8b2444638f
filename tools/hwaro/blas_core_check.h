// OpenBLAS picks its kernels from the CPU's identity. On some virtual machines (the lent H200
// machine's "Intel(R) Xeon(R) Processor", for one) it does not recognise the model and falls
// back to its Prescott kernels, which use no AVX at all: matmul then runs at a tenth of the
// CPU's speed. `hwaro info` and `hwaro bench` say so, and what to set.
#pragma once

#include <string>
#include <string_view>

namespace hwaro_cli {

// The core OpenBLAS reports inside hw::build_info().blas ("... (core Haswell)"); "" if absent.
std::string blas_core_from_config(std::string_view blas);

// A note when `core` is one of OpenBLAS's pre-AVX2 cores while `cpu_flags` (the "flags" line of
// /proc/cpuinfo) has AVX-512 or AVX2 and FMA; "" when the kernels fit the CPU.
std::string blas_core_warning(std::string_view core, std::string_view cpu_flags);

// The same for this machine: its BLAS and its /proc/cpuinfo.
std::string blas_core_warning_here();

}  // namespace hwaro_cli
