// `hwaro train --distributed`: the launch check, the process group and the per-rank pieces.
#include "distributed_training.h"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <vector>

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

// What OpenMPI's mpirun, MPICH's Hydra and PMIx launchers put in every rank's environment.
// Without one of them MPI would start a lone "singleton" rank, which is not what the user meant.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

DistributedRun start_distributed(const TrainOptions& options) {
  if (!started_by_mpi_launcher()) {
    throw hw::Error(
        "--distributed: this process was not started by an MPI launcher (none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, "
        "PMIX_RANK is set); start one process per rank with it, e.g. `mpirun -np 2 hwaro train --distributed`, "
        "or leave --distributed out to train in one process");
  }
  const bool on_gpu = options.device == "auto" ? hw::cuda::is_available() : hw::Device(options.device).is_cuda();
  if (on_gpu && options.device != "auto" && hw::Device(options.device).has_index()) {
    throw hw::Error("--distributed --device " + options.device +
                    ": each rank trains on the GPU of its local rank (rank 0 of a machine on cuda:0, and so on); "
                    "pass --device cuda, or --device auto");
  }
  const int budget = options.threads > 0 ? options.threads : hw::get_num_threads();
  hw::distributed::init_process_group(on_gpu ? "nccl" : "mpi");
  DistributedRun run{.active = true,
                     .rank = hw::distributed::get_rank(),
                     .world = hw::distributed::get_world_size(),
                     .threads = 0,
                     .device = on_gpu ? hw::Device(hw::kCUDA, hw::distributed::get_local_rank()) : hw::Device("cpu")};
  run.threads = std::max(1, budget / run.world);
  hw::set_num_threads(run.threads);
  return run;
}

std::shared_ptr<hw::data::Dataset> test_shard(const std::shared_ptr<hw::data::Dataset>& test,
                                              const DistributedRun& run) {
  if (!run.active) return test;
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(run.rank); i < test->size(); i += static_cast<std::size_t>(run.world)) {
    mine.push_back(i);
  }
  return std::make_shared<hw::data::Subset>(test, std::move(mine));
}

void sum_over_ranks(hw::Tensor& values, const DistributedRun& run) {
  if (!run.active) return;
  // NCCL reduces GPU tensors only: the few sums travel through the rank's GPU and back.
  hw::Tensor on_device = values.to(run.device);
  hw::distributed::all_reduce(on_device, hw::distributed::ReduceOp::Sum);
  values = on_device.to(hw::Device("cpu"));
}

std::string parameter_digest(const hw::nn::Module& model) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  for (const hw::Tensor& p : model.parameters()) {
    const hw::Tensor host = p.detach().to(hw::Device("cpu")).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
    for (std::size_t i = 0; i < host.nbytes(); ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ULL;  // FNV-1a 64-bit prime
    }
  }
  std::ostringstream hex;
  hex << std::hex << std::setw(16) << std::setfill('0') << hash;
  return hex.str();
}

}  // namespace hwaro_cli
