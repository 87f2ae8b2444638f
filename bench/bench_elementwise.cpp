// c = a + b on 16M floats with a fresh result every time, against a plain copy loop
// in the same binary (the memory bandwidth this machine gives one stream in, one out);
// the dispatch overhead of a one-element add; and the transcendental unary ops side by side
// (expm1 and log1p against the exp and log they refine), on 1M floats.
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

constexpr std::int64_t kUnary = std::int64_t{1} << 20;

template <hw::Tensor (*Op)(const hw::Tensor&)> void BM_unary_1M(benchmark::State& state) {
  // In (0.5, 1.5): inside every op's domain.
  const hw::Tensor x = hw::rand({kUnary}) + 0.5;
  for (auto _ : state) {
    hw::Tensor y = Op(x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * kUnary);
}

}  // namespace

BENCHMARK(BM_unary_1M<hw::exp>)->Name("BM_unary_1M/exp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_unary_1M<hw::expm1>)->Name("BM_unary_1M/expm1")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_unary_1M<hw::log>)->Name("BM_unary_1M/log")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_unary_1M<hw::log1p>)->Name("BM_unary_1M/log1p")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_add_fresh_result_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_copy_loop_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_one_element)->Unit(benchmark::kNanosecond);
