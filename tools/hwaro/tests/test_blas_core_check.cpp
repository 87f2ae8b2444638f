// The note `hwaro info` and `hwaro bench` print when OpenBLAS uses kernels older than the CPU.
#include <gtest/gtest.h>

#include "blas_core_check.h"

namespace {

using hwaro_cli::blas_core_from_config;
using hwaro_cli::blas_core_warning;

TEST(BlasCoreCheck, ReadsTheCoreOutOfTheBlasConfig) {
  EXPECT_EQ(blas_core_from_config("OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH Prescott MAX_THREADS=64 (core Prescott)"),
            "Prescott");
  EXPECT_EQ(blas_core_from_config("OpenBLAS 0.3.21 (core SkylakeX)"), "SkylakeX");
  EXPECT_EQ(blas_core_from_config("OpenBLAS 0.3.21"), "");
  EXPECT_EQ(blas_core_from_config("OpenBLAS (core Haswell"), "");
}

TEST(BlasCoreCheck, AnOldCoreOnANewCpuGetsTheRightSuggestion) {
  const std::string avx512 = "flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw";
  const std::string avx2 = "flags\t\t: fpu sse2 avx avx2 fma";
  const std::string note = blas_core_warning("Prescott", avx512);
  EXPECT_NE(note.find("uses its Prescott kernels"), std::string::npos) << note;
  EXPECT_NE(note.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << note;
  EXPECT_NE(blas_core_warning("Nehalem", avx2).find("OPENBLAS_CORETYPE=Haswell"), std::string::npos);
  // "avx512f" must be a whole flag, not a prefix of another.
  EXPECT_NE(blas_core_warning("Prescott", "flags : avx2 fma avx512fx").find("Haswell"), std::string::npos);
}

TEST(BlasCoreCheck, FittingKernelsOrAnOldCpuGetNoNote) {
  EXPECT_EQ(blas_core_warning("SkylakeX", "flags : avx2 fma avx512f"), "");
  EXPECT_EQ(blas_core_warning("Haswell", "flags : avx2 fma"), "");
  EXPECT_EQ(blas_core_warning("Prescott", "flags : sse2 sse3"), "");  // the kernels fit this CPU
  EXPECT_EQ(blas_core_warning("", "flags : avx512f"), "");
}

}  // namespace
