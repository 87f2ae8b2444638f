// Timing of `hwaro bench`: see bench_timing.h.
#include "bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

// One run on the GPU, between two events recorded on the current stream of `device`.
double time_cuda_run(int device, const std::function<void()>& work) {
  hw::cuda::DeviceGuard guard(device);
  hw::cuda::Event start(/*enable_timing=*/true);
  hw::cuda::Event stop(/*enable_timing=*/true);
  start.record();
  work();
  stop.record();
  stop.synchronize();
  return start.elapsed_time(stop);
}

double time_cpu_run(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double nearest_rank(const std::vector<double>& sorted, double fraction) {
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

Timing summarize(std::vector<double> samples_ms) {
  HWARO_CHECK(!samples_ms.empty(), "summarize: expected at least one timed run, found none");
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  Timing t;
  t.runs = static_cast<int>(n);
  t.median_ms = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  t.p10_ms = nearest_rank(samples_ms, 0.10);
  t.p90_ms = nearest_rank(samples_ms, 0.90);
  return t;
}

Timing time_runs(const hw::Device& device, const std::function<void()>& work, const RunPlan& plan) {
  HWARO_CHECK(plan.min_runs >= 1 && plan.max_runs >= plan.min_runs && plan.warmup_runs >= 0,
              "time_runs: expected 0 <= warm-up runs and 1 <= min_runs <= max_runs, found warm-up ",
              plan.warmup_runs, ", min ", plan.min_runs, ", max ", plan.max_runs);
  const bool on_gpu = device.is_cuda();
  const int index = on_gpu ? (device.has_index() ? device.index() : hw::cuda::current_device()) : -1;
  auto run_once = [&] { return on_gpu ? time_cuda_run(index, work) : time_cpu_run(work); };

  for (int i = 0; i < plan.warmup_runs; ++i) (void)run_once();
  std::vector<double> samples;
  double total_ms = 0;
  while (static_cast<int>(samples.size()) < plan.max_runs &&
         (static_cast<int>(samples.size()) < plan.min_runs || total_ms < plan.budget_s * 1e3)) {
    samples.push_back(run_once());
    total_ms += samples.back();
  }
  return summarize(std::move(samples));
}

}  // namespace hwaro_cli
