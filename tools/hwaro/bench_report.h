#pragma once
// What `hwaro bench` measured, and its two renderings: the table people read and the JSON
// scripts read. Both carry the same facts, including what was not measured and why.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_timing.h"
#include "device_peak.h"

namespace hwaro_cli {

// One device the bench ran on, with its float32 peak.
struct BenchDevice {
  std::string device;  // "cpu", "cuda:0"
  std::string name;    // the CPU model or the GPU's name
  PeakEstimate peak;
};

// One workload measured on one device.
struct BenchRow {
  std::string workload;  // "matmul 1024x1024 float32", "train step mlp, batch 128"
  std::string device;
  Timing timing;
  double throughput = 0;              // in `unit`
  std::string unit;                   // "GFLOP/s" or "samples/s"
  std::optional<double> flops;        // FLOPs of one run, when they can be counted
  std::optional<double> peak_fraction;  // achieved GFLOP/s / the device's peak
  std::string peak_note;              // why peak_fraction is empty, when it is
  std::optional<double> speedup_vs_cpu;  // CPU median / this median (GPU rows with a CPU row)
};

// A workload not measured on a device, and why.
struct BenchSkip {
  std::string workload;
  std::string device;
  std::string reason;
};

struct BenchReport {
  std::string date_utc;  // ISO 8601
  std::string cpu_model;
  int logical_cores = 0;
  int threads = 0;       // threads hwaro's CPU ops use
  std::string blas_note;  // blas_core_check.h: OpenBLAS on kernels older than the CPU ("" if not)
  bool quick = false;
  // The 1-minute load average before and after the runs (Linux), to tell a quiet machine's
  // figures from a busy one's: with more runnable threads than cores, every wall-clock time
  // includes waiting for a turn.
  std::optional<double> load_before, load_after;
  std::string gpu_note;  // "no CUDA device: GPU rows not measured (why)"; empty with GPUs
  std::vector<BenchDevice> devices;
  std::vector<BenchRow> rows;
  std::vector<BenchSkip> skipped;
};

// Fills peak_fraction (from flops and the device's peak) and speedup_vs_cpu (from the CPU row
// of the same workload) in every row.
void derive_ratios(BenchReport& report);

std::string format_table(const BenchReport& report);
nlohmann::json to_json(const BenchReport& report);

}  // namespace hwaro_cli
