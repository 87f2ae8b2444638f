// Matmul and training-step workloads of `hwaro bench`.
#include "bench_workloads.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "bench_guard.h"
#include "models.h"

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

// The sizes to measure, smallest first (each predicts the next), a size given twice measured once.
std::vector<std::int64_t> ascending_unique(std::vector<std::int64_t> sizes) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string seconds_text(double seconds) {
  std::ostringstream s;
  s.precision(seconds < 100 ? 2 : 4);
  s << seconds << " s";
  return s.str();
}

// The matrix-product FLOPs of one training step of a model whose weighted layers are all Linear:
// forward 2*B*in*out per layer, backward 2*B*in*out for the weight gradient and as much again
// for the input gradient, except in the first layer, whose input needs none. Elementwise work
// (bias, ReLU, softmax, the optimiser) is left out: it is a few percent here. Empty, with the
// reason in `why_not`, when another layer holds weights (a convolution's FLOPs are not counted).
std::optional<double> linear_step_flops(hw::nn::Module& model, std::int64_t batch, std::string& why_not) {
  double flops = 0;
  bool first = true;
  for (const auto& m : model.modules()) {
    if (auto* linear = dynamic_cast<hw::nn::LinearImpl*>(m.get())) {
      const double mnk = static_cast<double>(batch) * static_cast<double>(linear->in_features) *
                         static_cast<double>(linear->out_features);
      flops += (first ? 4.0 : 6.0) * mnk;
      first = false;
    } else if (!m->parameters(/*recurse=*/false).empty()) {
      why_not = "n/a: FLOPs are counted for Linear layers only, and this model has " + m->name() + " layers";
      return std::nullopt;
    }
  }
  return flops;
}

}  // namespace

void bench_training_steps(const BenchDevice& bench_device, const std::string& model_name,
                          const std::vector<std::int64_t>& batch_sizes, const RunPlan& plan, BenchReport& report) {
  const hw::Device device(bench_device.device);
  const int runs = plan.warmup_runs + plan.min_runs;
  double last_ms = 0;
  std::int64_t last_batch = 0;
  for (const std::int64_t batch : ascending_unique(batch_sizes)) {
    const std::string name = "train step " + model_name + ", batch " + std::to_string(batch);
    const auto skip = [&](double predicted_s, const std::string& from) {
      report.skipped.push_back({name, device.str(),
                                "its " + std::to_string(runs) + " runs would take about " + seconds_text(predicted_s) +
                                    " (from " + from + "), over the " + seconds_text(kWorkloadLimitSeconds) +
                                    " limit per workload"});
    };
    // A step's time grows about linearly in the batch, so the last batch measured predicts this one
    // without running it: a probe run of a huge batch could itself take minutes.
    if (last_batch > 0) {
      const double predicted_s = last_ms * static_cast<double>(batch) / static_cast<double>(last_batch) * runs / 1e3;
      if (predicted_s > kWorkloadLimitSeconds) {
        skip(predicted_s, "the measured batch " + std::to_string(last_batch));
        continue;
      }
    }
    run_guarded(report, name, device.str(), [&] {
      hw::manual_seed(0);
      const std::shared_ptr<hw::nn::Module> model = make_model(model_name);
      model->to(device);
      model->train();
      hw::optim::Adam optimizer(model->parameters(), {.lr = 1e-3});
      const hw::Tensor inputs = hw::randn({batch, 1, 28, 28}, {.device = device});
      const hw::Tensor labels = hw::randint(0, 10, {batch}, {.device = device});
      auto step = [&] {
        optimizer.zero_grad();
        hw::nn::functional::cross_entropy(model->forward(inputs), labels).backward();
        optimizer.step();
      };
      // One run first predicts (high, if anything) what the warm-up and runs would take. The first
      // run on a device also pays its start-up (cuDNN's handle, kernel loading), so a prediction over
      // the limit is taken again from a second, warm run before the workload is skipped.
      const auto one_run = [&] {
        return time_runs(device, step, {.warmup_runs = 0, .min_runs = 1, .max_runs = 1, .budget_s = 0}).median_ms;
      };
      double predicted_s = one_run() * runs / 1e3;
      if (predicted_s > kWorkloadLimitSeconds) predicted_s = one_run() * runs / 1e3;
      if (predicted_s > kWorkloadLimitSeconds) {
        skip(predicted_s, "one run");
        return;
      }
      const Timing timing = time_runs(device, step, plan);
      BenchRow row;
      row.workload = name;
      row.device = device.str();
      row.timing = timing;
      row.throughput = static_cast<double>(batch) / (timing.median_ms * 1e-3);
      row.unit = "samples/s";
      row.flops = linear_step_flops(*model, batch, row.peak_note);
      report.rows.push_back(row);
      last_ms = timing.median_ms;
      last_batch = batch;
    });
  }
}

void bench_matmuls(const BenchDevice& bench_device, const std::vector<std::int64_t>& sizes, const RunPlan& plan,
                   BenchReport& report) {
  const hw::Device device(bench_device.device);
  const int runs = plan.warmup_runs + plan.min_runs;
  double last_ms = 0;
  std::int64_t last_n = 0;
  for (const std::int64_t n : ascending_unique(sizes)) {
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
    run_guarded(report, name, device.str(), [&] {
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
    });
  }
}

}  // namespace hwaro_cli
