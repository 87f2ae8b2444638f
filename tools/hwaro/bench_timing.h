#pragma once
// How `hwaro bench` times one workload: warm-up runs (allocator caches, kernel loading, BLAS
// thread start-up), then many timed runs, each one synchronised with the device, summarised
// by the median and the 10th and 90th percentiles (the spread says how noisy the machine was).
#include <functional>
#include <vector>

#include "hwaro/hwaro.h"

namespace hwaro_cli {

// How many runs to make: at least min_runs, then more while the total stays under budget_s,
// at most max_runs.
struct RunPlan {
  int warmup_runs = 2;
  int min_runs = 10;
  int max_runs = 200;
  double budget_s = 2.0;
};

struct Timing {
  int runs = 0;
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
};

// Runs `work` on `device` as `plan` says. On a GPU each run is timed by a pair of CUDA events
// on the device's current stream (the GPU's own clock, so host-side launch jitter is not
// counted); on the CPU by a steady clock, the work being finished when it returns.
Timing time_runs(const hwaro::Device& device, const std::function<void()>& work, const RunPlan& plan);

// Median, p10 and p90 of samples (nearest-rank percentiles; the median of an even count is
// the mean of the middle two). At least one sample.
Timing summarize(std::vector<double> samples_ms);

}  // namespace hwaro_cli
