// main() for every benchmark: Google Benchmark's, plus the facts a reader of the
// numbers needs (OpenBLAS's kernel family, hwaro's thread count).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <string>

#include "hwaro/hwaro.h"

int main(int argc, char** argv) {
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("hwaro_threads", std::to_string(hwaro::get_num_threads()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
