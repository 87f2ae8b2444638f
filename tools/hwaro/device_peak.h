#pragma once
// The float32 peak of each device, so that `hwaro bench` can say what fraction of it a
// workload reaches. Where a figure cannot be got right the answer is "not known" with a reason,
// never a guess.
#include <optional>
#include <string>

namespace hwaro_cli {

struct PeakEstimate {
  std::optional<double> gflops;  // float32 GFLOP/s; empty when not known
  std::string how;               // how it was got, or why it is not known
};

// The CPU: `threads` threads running independent FMA chains at once in the widest vector unit
// the CPU has (AVX-512 or AVX2), best of three short runs (noise only ever lowers it). Measured,
// so it includes the clock the vector unit really runs at and any neighbour's load.
PeakEstimate cpu_peak(int threads, int trials = 3, double seconds_per_trial = 0.2);

// A GPU: multiprocessors x peak SM clock x float32 FLOPs per clock per multiprocessor for its
// architecture (CUDA cores, no tensor cores: float32 matmuls do not use TF32 unless enabled).
PeakEstimate gpu_peak(int device_index);

// FLOPs per clock of one multiprocessor in float32 (2 per FMA lane) for compute capability
// major.minor; empty for an architecture this table does not know.
std::optional<int> fp32_flops_per_clock_per_sm(int major, int minor);

}  // namespace hwaro_cli
