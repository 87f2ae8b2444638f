#pragma once
// The flags of `hwaro train`, with the defaults the README's main job runs: the MLP on
// Fashion-MNIST with Adam, on the best device, in a few minutes on a 2-core CPU.
#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace hwaro_cli {

struct TrainOptions {
  std::string model = "mlp";
  std::string data = "fashion-mnist";  // fashion-mnist | mnist | a directory of IDX files
  std::string device = "auto";         // auto | cpu | cuda | cuda:N
  int epochs = 5;
  std::size_t batch_size = 128;
  double lr = 1e-3;
  std::string optimizer = "adam";  // sgd (momentum 0.9) | adam | adamw
  int workers = 2;
  int pin_memory = -1;  // -1: on when training on a GPU; 0/1 from --no-pin-memory/--pin-memory
  std::uint64_t seed = 0;
  std::string out_dir = "hwaro-run";
  std::string checkpoint;  // default: <out>/checkpoint.safetensors
  std::string metrics;     // default: <out>/metrics.jsonl
  std::string plot;        // default: <out>/training.svg
  std::string resume;
  int threads = 0;             // 0: hwaro's default (all cores)
  bool data_parallel = false;  // hw::nn::DataParallel over every GPU (on the CPU: two replicas)
  bool distributed = false;    // one process per rank under mpirun, DistributedDataParallel over MPI
  bool parameter_digest = false;  // every rank prints a digest of its final parameters
  std::string progress = "auto";  // auto (bar on a terminal, lines otherwise) | bar | lines | none
};

// Adds the flags to `command`, validated by CLI11 (a bad value names the flag and what it accepts).
void add_train_flags(CLI::App& command, TrainOptions& options);

}  // namespace hwaro_cli
