// softmax over the last dimension of a 4096 x 4096 float32 tensor.
#include <benchmark/benchmark.h>

#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

void BM_softmax_4096x4096(benchmark::State& state) {
  const hw::Tensor x = hw::randn({4096, 4096});
  for (auto _ : state) {
    hw::Tensor y = hw::softmax(x, -1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * x.numel() * 2 * static_cast<std::int64_t>(sizeof(float)));
}

}  // namespace

BENCHMARK(BM_softmax_4096x4096)->Unit(benchmark::kMillisecond)->UseRealTime();
