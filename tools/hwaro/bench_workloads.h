#pragma once
// The workloads of `hwaro bench`: square float32 matmuls and one training step of a model.
// Each adds a row per device to the report, or a skip saying why it did not run.
#include <cstdint>
#include <string>
#include <vector>

#include "bench_report.h"
#include "bench_timing.h"

namespace hwaro_cli {

// A workload whose warm-up and minimum runs would take longer than this is skipped, with the
// predicted time as the reason.
constexpr double kWorkloadLimitSeconds = 10.0;

// Each workload runs under run_guarded (bench_guard.h): one that fails is a skip quoting its error.
// A size or batch size given twice is measured once.

// n x n @ n x n in float32 for each n (ascending), on `device`. The time of the next size is
// predicted from the last one measured (matmul is n^3), or for the first from the device's peak
// (a lower bound), and the size skipped when over the limit.
void bench_matmuls(const BenchDevice& device, const std::vector<std::int64_t>& sizes, const RunPlan& plan,
                   BenchReport& report);

// One training step of make_model(model) (models.h) on 28x28 one-channel inputs, for each batch
// size: zero_grad, forward, cross_entropy, backward, an Adam step (hwaro train's default).
// Throughput in samples/s; FLOPs counted when the model's only weighted layers are Linear. Batch
// sizes go in ascending order: the time of a batch is predicted linearly from the last one measured,
// or for the first from one run (twice, where the cold first run predicts over the limit); a batch
// size predicted over the limit is skipped.
void bench_training_steps(const BenchDevice& device, const std::string& model,
                          const std::vector<std::int64_t>& batch_sizes, const RunPlan& plan, BenchReport& report);

}  // namespace hwaro_cli
