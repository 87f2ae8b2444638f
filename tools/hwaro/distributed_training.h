#pragma once
// `mpirun -np N hwaro train --distributed` (guide §4.1): one process per rank, the MPI process
// group, DistributedDataParallel over the model, each rank training on its DistributedSampler
// shard. These are the pieces the loop in trainer.cpp calls when the flag is given.
#include <cstdint>
#include <memory>
#include <string>

#include "hwaro/hwaro.h"
#include "train_options.h"

namespace hwaro_cli {

struct DistributedRun {
  bool active = false;  // --distributed given
  int rank = 0, world = 1;
  int threads = 0;      // op threads of this rank
  hwaro::Device device = hwaro::Device("cpu");  // where this rank trains
};

// Checks that an MPI launcher started this process (a clear error otherwise, with the command
// to run) and initialises the process group: NCCL where the rank trains on a GPU (--device auto
// on a machine with one, or --device cuda), each rank on the GPU of its local rank as PyTorch's
// DDP does; MPI on the CPU. Gives this rank its share of the threads: --threads (0: every core)
// divided by the number of ranks, at least one.
DistributedRun start_distributed(const TrainOptions& options);

// The samples of `test` this rank evaluates: every world-th from its rank, not padded, so that the
// sums all-reduced over ranks count each test image exactly once.
std::shared_ptr<hwaro::data::Dataset> test_shard(const std::shared_ptr<hwaro::data::Dataset>& test,
                                                 const DistributedRun& run);

// Sums `values` (float64, any shape) over the ranks in place; nothing to do outside --distributed.
void sum_over_ranks(hwaro::Tensor& values, const DistributedRun& run);

// FNV-1a over the bytes of every parameter in registration order, as 16 hex digits: equal
// digests mean bitwise equal parameters.
std::string parameter_digest(const hwaro::nn::Module& model);

}  // namespace hwaro_cli
