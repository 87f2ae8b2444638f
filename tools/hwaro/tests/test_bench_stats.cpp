// The arithmetic of `hwaro bench`: percentiles, the run plan, peaks and the derived ratios,
// against references written independently of the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "bench_guard.h"
#include "bench_report.h"
#include "bench_timing.h"
#include "device_peak.h"

namespace hw = hwaro;
using namespace hwaro_cli;

namespace {

// Nearest-rank percentile by its definition: the smallest sample with at least q*n samples at or
// below it (and at least one).
double percentile_by_counting(const std::vector<double>& samples, double q) {
  const double needed = std::max(1.0, q * static_cast<double>(samples.size()));
  double best = INFINITY;
  for (double x : samples) {
    const auto at_or_below = std::count_if(samples.begin(), samples.end(), [&](double y) { return y <= x; });
    if (static_cast<double>(at_or_below) >= needed - 1e-9) best = std::min(best, x);
  }
  return best;
}

// The median by its definition: the middle sample, or the mean of the two middle ones.
double median_by_definition(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const long double lo = samples[(n - 1) / 2], hi = samples[n / 2];
  return static_cast<double>((lo + hi) / 2);
}

}  // namespace

TEST(BenchStats, SummarizeMatchesTheDefinitionsOnRandomSamples) {
  std::mt19937_64 rng(12345);
  std::lognormal_distribution<double> times(0.0, 1.0);
  for (std::size_t n = 1; n <= 60; ++n) {
    std::vector<double> samples(n);
    for (double& s : samples) s = times(rng);
    const Timing t = summarize(samples);
    EXPECT_EQ(t.runs, static_cast<int>(n));
    EXPECT_DOUBLE_EQ(t.median_ms, median_by_definition(samples)) << "n = " << n;
    EXPECT_DOUBLE_EQ(t.p10_ms, percentile_by_counting(samples, 0.10)) << "n = " << n;
    EXPECT_DOUBLE_EQ(t.p90_ms, percentile_by_counting(samples, 0.90)) << "n = " << n;
    EXPECT_LE(t.p10_ms, t.median_ms);
    EXPECT_LE(t.median_ms, t.p90_ms);
  }
}

TEST(BenchStats, SummarizeOfNothingIsAClearError) {
  EXPECT_THROW(summarize({}), hw::Error);
}

TEST(BenchStats, TimeRunsFollowsThePlan) {
  int calls = 0;
  // A zero budget: warm-up plus exactly min_runs.
  Timing t = time_runs(hw::Device("cpu"), [&] { ++calls; }, {.warmup_runs = 2, .min_runs = 5, .max_runs = 9, .budget_s = 0});
  EXPECT_EQ(t.runs, 5);
  EXPECT_EQ(calls, 7);
  // A budget never reached: max_runs.
  calls = 0;
  t = time_runs(hw::Device("cpu"), [&] { ++calls; }, {.warmup_runs = 0, .min_runs = 1, .max_runs = 9, .budget_s = 100});
  EXPECT_EQ(t.runs, 9);
  EXPECT_EQ(calls, 9);
  // Each run is timed around the work: a 3 ms sleep cannot read as less.
  t = time_runs(hw::Device("cpu"), [] { std::this_thread::sleep_for(std::chrono::milliseconds(3)); },
                {.warmup_runs = 0, .min_runs = 3, .max_runs = 3, .budget_s = 0});
  EXPECT_GE(t.p10_ms, 3.0);
  EXPECT_THROW(time_runs(hw::Device("cpu"), [] {}, {.warmup_runs = 0, .min_runs = 0, .max_runs = 1, .budget_s = 0}),
               hw::Error);
}

TEST(BenchStats, GpuPeakTableGivesThePublishedFloat32Peaks) {
  // SMs x boost clock x FLOPs/clock against NVIDIA's published float32 (non-tensor) peaks, in TFLOP/s.
  struct Known { const char* name; int major, minor, sms; double mhz, published_tflops; };
  const Known gpus[] = {{"V100 SXM2", 7, 0, 80, 1530, 15.7},  {"A100 SXM", 8, 0, 108, 1410, 19.5},
                        {"RTX 4090", 8, 9, 128, 2520, 82.6},  {"H100 SXM", 9, 0, 132, 1980, 66.9},
                        {"RTX 3090", 8, 6, 82, 1695, 35.6}};
  for (const Known& g : gpus) {
    const auto per_clock = fp32_flops_per_clock_per_sm(g.major, g.minor);
    ASSERT_TRUE(per_clock.has_value()) << g.name;
    const double tflops = g.sms * g.mhz * 1e6 * *per_clock / 1e12;
    EXPECT_NEAR(tflops, g.published_tflops, 0.01 * g.published_tflops) << g.name;
  }
  EXPECT_FALSE(fp32_flops_per_clock_per_sm(5, 0).has_value());  // Maxwell: not in the table, so n/a
  EXPECT_FALSE(fp32_flops_per_clock_per_sm(99, 0).has_value());
}

TEST(BenchStats, CpuPeakIsPositiveOrExplained) {
  const PeakEstimate peak = cpu_peak(1, 1, 0.05);
  if (peak.gflops) {
    EXPECT_GT(*peak.gflops, 0.0);
    EXPECT_NE(peak.how.find("measured"), std::string::npos);
  } else {
    EXPECT_EQ(peak.how.rfind("n/a: ", 0), 0u) << peak.how;
  }
  EXPECT_THROW(cpu_peak(0), hw::Error);
  EXPECT_THROW(cpu_peak(1, 0, 0.05), hw::Error);
  EXPECT_THROW(cpu_peak(1, 1, 0.0), hw::Error);
}

TEST(BenchStats, RatiosAndRenderingsCarryTheSameFacts) {
  BenchReport report;
  report.cpu_model = "test cpu";
  report.logical_cores = 2;
  report.threads = 2;
  report.gpu_note = "no CUDA device: GPU rows not measured (testing)";
  report.devices = {{"cpu", "test cpu", {200.0, "measured"}}, {"cuda:0", "test gpu", {std::nullopt, "n/a: unknown"}}};
  BenchRow cpu_row{.workload = "matmul 4x4 float32", .device = "cpu", .timing = {10, 2.0, 1.0, 3.0},
                   .throughput = 0, .unit = "GFLOP/s", .flops = 1e8};
  BenchRow gpu_row = cpu_row;
  gpu_row.device = "cuda:0";
  gpu_row.timing = {10, 0.25, 0.2, 0.3};
  BenchRow step{.workload = "train step cnn, batch 8", .device = "cpu", .timing = {5, 4.0, 3.0, 5.0},
                .throughput = 2000, .unit = "samples/s", .flops = std::nullopt, .peak_note = "n/a: not counted here"};
  report.rows = {cpu_row, gpu_row, step};
  report.skipped = {{"matmul 9x9 float32", "cpu", "too slow (testing)"}};
  derive_ratios(report);

  // 1e8 FLOPs in 2 ms = 50 GFLOP/s, a quarter of 200.
  ASSERT_TRUE(report.rows[0].peak_fraction.has_value());
  EXPECT_NEAR(*report.rows[0].peak_fraction, 0.25, 1e-12);
  EXPECT_FALSE(report.rows[0].speedup_vs_cpu.has_value());
  ASSERT_TRUE(report.rows[1].speedup_vs_cpu.has_value());
  EXPECT_NEAR(*report.rows[1].speedup_vs_cpu, 8.0, 1e-12);
  EXPECT_FALSE(report.rows[1].peak_fraction.has_value());  // that GPU's peak is not known
  EXPECT_EQ(report.rows[1].peak_note, "n/a: the device's peak is not known");
  EXPECT_EQ(report.rows[2].peak_note, "n/a: not counted here");

  const std::string table = format_table(report);
  for (const char* expected : {"no CUDA device: GPU rows not measured (testing)", "25%", "8.0x",
                               "not measured: matmul 9x9 float32 on cpu: too slow (testing)",
                               "of peak n/a: the device's peak is not known"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << table;
  }
  const nlohmann::json json = to_json(report);
  EXPECT_EQ(json["results"].size(), 3u);
  EXPECT_DOUBLE_EQ(json["results"][1]["speedup_vs_cpu"].get<double>(), 8.0);
  EXPECT_TRUE(json["results"][1]["fraction_of_peak"].is_null());
  EXPECT_EQ(json["skipped"][0]["reason"], "too slow (testing)");
  EXPECT_EQ(json["gpu_note"], report.gpu_note);
}

TEST(BenchStats, SmallRatiosDoNotReadAsZero) {
  // A GPU train step at 0.15% of its peak and a tiny matmul 25x slower on the GPU are common:
  // rounded to whole percent and one decimal they printed as "0%" and "0.0x".
  BenchReport report;
  report.devices = {{"cpu", "test cpu", {1000.0, "measured"}}, {"cuda:0", "test gpu", {1000.0, "measured"}}};
  BenchRow cpu_row{.workload = "matmul 2x2 float32", .device = "cpu", .timing = {10, 1.0, 1.0, 1.0},
                   .throughput = 0, .unit = "GFLOP/s", .flops = 1.5e6};  // 1.5 GFLOP/s: 0.15% of 1000
  BenchRow gpu_row = cpu_row;
  gpu_row.device = "cuda:0";
  gpu_row.timing = {10, 25.0, 25.0, 25.0};  // 0.04x
  report.rows = {cpu_row, gpu_row};
  derive_ratios(report);
  const std::string table = format_table(report);
  for (const char* expected : {" 0.15%", " 0.04x"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << table;
  }
  for (const char* wrong : {" 0%", " 0.0x"}) {
    EXPECT_EQ(table.find(wrong), std::string::npos) << "'" << wrong << "' in\n" << table;
  }
}

// A workload that throws hw::Error (the GPU out of memory at a large batch) is a skip quoting the
// error; the rows measured before it, and the workloads after it, are kept.
TEST(BenchStats, AFailedWorkloadIsASkipAndTheOthersAreKept) {
  BenchReport report;
  run_guarded(report, "first", "cpu", [&] { report.rows.push_back({.workload = "first", .device = "cpu"}); });
  run_guarded(report, "train step cnn, batch 65536", "cuda:0",
              [] { throw hw::OutOfMemoryError("CUDA out of memory: tried to allocate 9.0 GiB"); });
  run_guarded(report, "third", "cpu", [&] { report.rows.push_back({.workload = "third", .device = "cpu"}); });
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].workload, "first");
  EXPECT_EQ(report.rows[1].workload, "third");
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_EQ(report.skipped[0].workload, "train step cnn, batch 65536");
  EXPECT_EQ(report.skipped[0].device, "cuda:0");
  EXPECT_EQ(report.skipped[0].reason, "failed: CUDA out of memory: tried to allocate 9.0 GiB");
}
