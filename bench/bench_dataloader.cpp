// DataLoader throughput (issue 5, item 7). One benchmark iteration is one batch taken from
// the loop, so the time per iteration is the time per batch as the training loop sees it.
//   BM_loader_1ms_transform/workers:N: 16 samples a batch, each through a transform costing
//     about 1 ms of CPU (a busy loop over the sample's values, calibrated at start-up on
//     this thread's CPU clock, so that a loaded machine cannot make it look cheaper).
//   BM_loader_trivial/workers:N: 8 samples of 4 floats a batch, identity transform: the
//     loader's own cost per batch (get, collate, hand-over between threads).
// Run: build/bench/bench_dataloader --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <memory>

#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

constexpr std::int64_t kSampleValues = 784;  // one 28 x 28 image

// One pass of arithmetic over the values; `rounds` passes make the transform's cost.
void busy_passes(float* values, std::int64_t n, std::int64_t rounds) {
  for (std::int64_t r = 0; r < rounds; ++r) {
    for (std::int64_t i = 0; i < n; ++i) values[i] = values[i] * 0.999f + 0.001f;
    benchmark::ClobberMemory();
  }
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Passes that cost one millisecond of this thread's CPU time (the cheapest of a few tries).
std::int64_t rounds_per_millisecond() {
  static const std::int64_t rounds = [] {
    std::vector<float> values(kSampleValues, 1.0f);
    constexpr std::int64_t kTrial = 2000;
    double best = 1e9;
    for (int attempt = 0; attempt < 5; ++attempt) {
      const double t0 = thread_cpu_seconds();
      busy_passes(values.data(), kSampleValues, kTrial);
      best = std::min(best, thread_cpu_seconds() - t0);
    }
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(kTrial * 1e-3 / best));
  }();
  return rounds;
}

std::shared_ptr<hw::data::Dataset> dataset_with(std::int64_t samples, std::int64_t values,
                                                std::function<hw::Tensor(const hw::Tensor&)> fn) {
  auto base = std::make_shared<hw::data::TensorDataset>(hw::rand({samples, values}), hw::arange(samples));
  std::vector<std::shared_ptr<hw::data::Transform>> transforms = {std::make_shared<hw::data::Lambda>(std::move(fn))};
  return std::make_shared<hw::data::TransformedDataset>(base, std::move(transforms));
}

// Takes batches from `loader` for as long as the benchmark runs, starting epochs as needed.
void take_batches(benchmark::State& state, hw::data::DataLoader& loader) {
  auto it = loader.begin();
  for (auto _ : state) {
    if (it == loader.end()) it = loader.begin();
    benchmark::DoNotOptimize(it->data.data_ptr());
    ++it;
  }
  state.counters["batches_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_loader_1ms_transform(benchmark::State& state) {
  const std::int64_t rounds = rounds_per_millisecond();
  auto dataset = dataset_with(4096, kSampleValues, [rounds](const hw::Tensor& x) {
    hw::Tensor y = x.clone();
    busy_passes(static_cast<float*>(y.data_ptr()), y.numel(), rounds);
    return y;
  });
  hw::data::DataLoader loader(
      dataset,
      {.batch_size = 16, .num_workers = static_cast<int>(state.range(0)), .persistent_workers = state.range(0) > 0});
  take_batches(state, loader);
  state.counters["passes_per_ms"] = static_cast<double>(rounds);
}

void BM_loader_trivial(benchmark::State& state) {
  auto dataset = dataset_with(1 << 17, 4, [](const hw::Tensor& x) { return x; });
  hw::data::DataLoader loader(
      dataset,
      {.batch_size = 8, .num_workers = static_cast<int>(state.range(0)), .persistent_workers = state.range(0) > 0});
  take_batches(state, loader);
}

}  // namespace

BENCHMARK(BM_loader_1ms_transform)->ArgName("workers")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_loader_trivial)->ArgName("workers")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
