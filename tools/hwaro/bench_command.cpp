// `hwaro bench`: the guide's claim, measured. Square float32 matmuls and one training step of
// every model of `hwaro train` (models.h) on the CPU and on each GPU, each timed after warm-up and synchronised, median of many runs,
// printed as a table with the fraction of the device's peak and the GPU/CPU speed-up.
#include <chrono>
#include <ctime>
#include <fstream>
#include <optional>
#include <iostream>
#include <memory>

#include "blas_core_check.h"
#include "bench_report.h"
#include "bench_workloads.h"
#include "commands.h"
#include "models.h"
#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

struct BenchOptions {
  bool json = false;
  bool quick = false;
  std::vector<std::int64_t> sizes;        // empty: the defaults of the mode
  std::vector<std::int64_t> batch_sizes;  // empty: the defaults of the mode
};

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

// The 1-minute load average from /proc/loadavg; empty where there is none (not Linux).
std::optional<double> load_average() {
  std::ifstream file("/proc/loadavg");
  double load = 0;
  if (file >> load) return load;
  return std::nullopt;
}

// The CPU, then every GPU; without one, the note that says why there are no GPU rows.
void list_devices(BenchReport& report) {
  report.devices.push_back({"cpu", report.cpu_model,
                            report.quick ? cpu_peak(report.threads, 1, 0.05) : cpu_peak(report.threads)});
  const int gpus = hw::cuda::device_count();
  for (int i = 0; i < gpus; ++i) {
    report.devices.push_back({"cuda:" + std::to_string(i), hw::cuda::get_device_name(i), gpu_peak(i)});
  }
  if (gpus == 0) report.gpu_note = "no CUDA device: GPU rows not measured (" + hw::cuda::unavailable_reason() + ")";
}

BenchReport run_bench(const BenchOptions& options) {
  BenchReport report;
  report.date_utc = utc_now();
  const hw::HostInfo host = hw::host_info();
  report.cpu_model = host.cpu_model;
  report.blas_note = blas_core_warning_here();
  report.logical_cores = host.logical_cores;
  // Also gives OpenBLAS this many threads: until a small GEMM resets it, OpenBLAS keeps its own
  // default (OPENBLAS_NUM_THREADS or OMP_NUM_THREADS where set), and the CPU matmul rows would run
  // on another number of cores than the report and the peak say.
  hw::set_num_threads(hw::get_num_threads());
  report.threads = hw::get_num_threads();
  report.quick = options.quick;
  report.load_before = load_average();
  list_devices(report);

  // --quick is for CI: enough runs to exercise every path, not to be precise.
  const RunPlan plan = options.quick ? RunPlan{.warmup_runs = 1, .min_runs = 3, .max_runs = 10, .budget_s = 0.1}
                                     : RunPlan{.warmup_runs = 2, .min_runs = 10, .max_runs = 200, .budget_s = 2.0};
  const std::vector<std::int64_t> sizes =
      !options.sizes.empty() ? options.sizes
                             : (options.quick ? std::vector<std::int64_t>{64, 256} : std::vector<std::int64_t>{256, 1024, 4096});
  const std::vector<std::int64_t> batches =
      !options.batch_sizes.empty() ? options.batch_sizes
                                   : (options.quick ? std::vector<std::int64_t>{32} : std::vector<std::int64_t>{128, 256});
  for (const auto& device : report.devices) {
    bench_matmuls(device, sizes, plan, report);
    for (const auto& model : model_names()) bench_training_steps(device, model, batches, plan, report);
  }
  report.load_after = load_average();
  derive_ratios(report);
  return report;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "CPU against GPU, measured properly (warm-up, synchronised, median)");
  auto options = std::make_shared<BenchOptions>();
  cmd->add_flag("--json", options->json, "print the same results as one JSON object, for scripts");
  cmd->add_flag("--quick", options->quick, "few runs and small sizes (for CI): checks that it works, not how fast");
  cmd->add_option("--sizes", options->sizes, "matmul sizes n (n x n float32), e.g. --sizes 256,1024")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 16));
  cmd->add_option("--batch-sizes", options->batch_sizes, "batch sizes of the training steps, e.g. --batch-sizes 128,256")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->callback([options] {
    const BenchReport report = run_bench(*options);
    if (options->json) {
      std::cout << to_json(report).dump(2) << "\n";
    } else {
      std::cout << format_table(report);
    }
  });
}

}  // namespace hwaro_cli
