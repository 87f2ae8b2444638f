// hwaro::matmul against OpenBLAS's cblas_sgemm called directly, square float32 sizes.
// Target: at 2048, hwaro within 90% of cblas (ratio of the two rows' times).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

// Shown as "GFLOP=<n>/s": floating-point operations per second, in billions.
void set_flops(benchmark::State& state, std::int64_t n) {
  state.counters["GFLOP"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n) * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void BM_hwaro_matmul(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const hw::Tensor a = hw::randn({n, n});
  const hw::Tensor b = hw::randn({n, n});
  for (auto _ : state) {
    hw::Tensor c = hw::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}

void BM_cblas_sgemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const hw::Tensor a = hw::randn({n, n});
  const hw::Tensor b = hw::randn({n, n});
  hw::Tensor c = hw::empty({n, n});
  const int ni = static_cast<int>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data_ptr<float>(), ni,
                b.data_ptr<float>(), ni, 0.0f, c.data_ptr<float>(), ni);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}

}  // namespace

BENCHMARK(BM_hwaro_matmul)->RangeMultiplier(2)->Range(256, 2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cblas_sgemm)->RangeMultiplier(2)->Range(256, 2048)->Unit(benchmark::kMillisecond)->UseRealTime();
