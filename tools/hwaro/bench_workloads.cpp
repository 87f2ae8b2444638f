// Matmul and training-step workloads of `hwaro bench`.
#include "bench_workloads.h"

#include <algorithm>
#include <sstream>

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

std::string seconds_text(double seconds) {
  std::ostringstream s;
  s.precision(seconds < 100 ? 2 : 4);
  s << seconds << " s";
  return s.str();
}

}  // namespace

void bench_matmuls(const BenchDevice& bench_device, const std::vector<std::int64_t>& sizes, const RunPlan& plan,
                   BenchReport& report) {
  const hw::Device device(bench_device.device);
  const int runs = plan.warmup_runs + plan.min_runs;
  std::vector<std::int64_t> ascending = sizes;
  std::sort(ascending.begin(), ascending.end());
  double last_ms = 0;
  std::int64_t last_n = 0;
  for (const std::int64_t n : ascending) {
    const std::string name = "matmul " + std::to_string(n) + "x" + std::to_string(n) + " float32";
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    double predicted_s = 0;
    std::string predicted_from;
    if (last_n > 0) {
      const double scale = static_cast<double>(n) / static_cast<double>(last_n);
      predicted_s = last_ms * scale * scale * scale * runs / 1e3;
      predicted_from = "the measured " + std::to_string(last_n) + "x" + std::to_string(last_n) + " time";
    } else if (bench_device.peak.gflops) {
      predicted_s = flops * runs / (*bench_device.peak.gflops * 1e9);
      predicted_from = "the device's peak, at best";
    }
    if (predicted_s > kWorkloadLimitSeconds) {
      report.skipped.push_back({name, device.str(),
                                "its " + std::to_string(runs) + " runs would take about " + seconds_text(predicted_s) +
                                    " (from " + predicted_from + "), over the " + seconds_text(kWorkloadLimitSeconds) +
                                    " limit per workload"});
      continue;
    }
    const hw::Tensor a = hw::randn({n, n}, {.device = device});
    const hw::Tensor b = hw::randn({n, n}, {.device = device});
    const Timing timing = time_runs(device, [&] { (void)hw::matmul(a, b); }, plan);
    BenchRow row;
    row.workload = name;
    row.device = device.str();
    row.timing = timing;
    row.flops = flops;
    row.throughput = flops / (timing.median_ms * 1e-3) / 1e9;
    row.unit = "GFLOP/s";
    report.rows.push_back(row);
    last_ms = timing.median_ms;
    last_n = n;
  }
}

}  // namespace hwaro_cli
