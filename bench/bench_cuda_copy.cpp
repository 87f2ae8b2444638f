// Host-to-device copy bandwidth, pinned against pageable memory (guide Dev Tip 3):
// pinned memory lets the copy engine read host memory directly. Timed with CUDA events
// on the copy's stream. Run: build/bench/bench_cuda_copy (reports bytes_per_second).
#include <benchmark/benchmark.h>
#include <hwaro/hwaro.h>

namespace hw = hwaro;

namespace {

void h2d(benchmark::State& state, bool pinned) {
  if (!hw::cuda::is_available()) {
    state.SkipWithError(("no GPU: " + hw::cuda::unavailable_reason()).c_str());
    return;
  }
  const std::int64_t bytes = state.range(0);
  const hw::Tensor host = hw::ones({bytes}, {.dtype = hw::kUInt8, .pin_memory = pinned});
  hw::Tensor device = hw::empty({bytes}, {.dtype = hw::kUInt8, .device = hw::Device("cuda:0")});
  device.copy_(host);  // warm-up
  hw::cuda::Event start(true);
  hw::cuda::Event stop(true);
  for (auto _ : state) {
    start.record();
    device.copy_(host, /*non_blocking=*/true);
    stop.record();
    stop.synchronize();
    state.SetIterationTime(static_cast<double>(start.elapsed_time(stop)) / 1e3);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_H2D_Pinned(benchmark::State& state) { h2d(state, true); }
void BM_H2D_Pageable(benchmark::State& state) { h2d(state, false); }

BENCHMARK(BM_H2D_Pinned)->Arg(256 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_H2D_Pageable)->Arg(256 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
