// c = a + b on 16M floats with a fresh result every time, against a plain copy loop
// in the same binary (the memory bandwidth this machine gives one stream in, one out);
// and the dispatch overhead of a one-element add.
// Targets: add's bytes/s within 80% of the copy loop's; one-element add under 0.3 us.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

constexpr std::int64_t kLarge = std::int64_t{1} << 24;  // 16M floats, 64 MiB per tensor

void BM_add_fresh_result_16M(benchmark::State& state) {
  const hw::Tensor a = hw::randn({kLarge});
  const hw::Tensor b = hw::randn({kLarge});
  for (auto _ : state) {
    hw::Tensor c = a + b;  // a new tensor each iteration, as user code does
    benchmark::DoNotOptimize(c.data_ptr());
  }
  // Bytes moved: read a, read b, write c.
  state.SetBytesProcessed(state.iterations() * kLarge * 3 * static_cast<std::int64_t>(sizeof(float)));
}

void BM_copy_loop_16M(benchmark::State& state) {
  std::vector<float> src(kLarge, 1.0f), dst(kLarge);
  for (auto _ : state) {
    float* d = dst.data();
    const float* s = src.data();
    for (std::int64_t i = 0; i < kLarge; ++i) d[i] = s[i];
    benchmark::DoNotOptimize(d);
    benchmark::ClobberMemory();
  }
  // Bytes moved: read src, write dst.
  state.SetBytesProcessed(state.iterations() * kLarge * 2 * static_cast<std::int64_t>(sizeof(float)));
}

void BM_add_one_element(benchmark::State& state) {
  const hw::Tensor a = hw::ones({1});
  const hw::Tensor b = hw::ones({1});
  for (auto _ : state) {
    hw::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}

}  // namespace

BENCHMARK(BM_add_fresh_result_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_copy_loop_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_one_element)->Unit(benchmark::kNanosecond);
