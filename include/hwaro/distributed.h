#pragma once
// hw::distributed (torch.distributed): one process per rank, started by mpirun, talking through
// a process group.
//   hw::distributed::init_process_group("mpi");            // "nccl" for GPUs (CUDA builds)
//   int rank = hw::distributed::get_rank(), world = hw::distributed::get_world_size();
//   hw::distributed::all_reduce(grad, hw::distributed::ReduceOp::Avg);
//   auto work = hw::distributed::all_reduce(t, ReduceOp::Sum, /*async_op=*/true);  ... work->wait();
//   hw::distributed::destroy_process_group();
// Every collective must be called by every rank in the same order with tensors of the same
// shape and dtype. Each waits at most the group's timeout: a rank that died or never joined
// makes the others throw hw::DistributedError (naming the collective, the rank and the
// timeout) instead of hanging. Every rank calls destroy_process_group() at its normal end; an
// MPI rank that exits with the group still initialised (an error ended it early) aborts the
// whole job, since the others may be waiting for it. The MPI backend takes contiguous CPU
// tensors; the NCCL backend contiguous tensors on the rank's GPU (its local rank).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hwaro/errors.h"
#include "hwaro/tensor.h"

namespace hwaro::distributed {

// A collective failed or timed out.
class DistributedError : public Error {
 public:
  using Error::Error;
};

enum class ReduceOp { Sum, Avg, Max, Min };

// PyTorch's default collective timeout.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(30);

// A collective in flight. wait() returns once it is complete (the tensors hold the result) and
// throws DistributedError when the timeout passes first; is_completed() never blocks.
class Work {
 public:
  virtual ~Work() = default;
  virtual bool is_completed() = 0;
  virtual void wait() = 0;
};

// The engine under the free functions below (one per backend).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual std::string backend() const = 0;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual int local_rank() const = 0;
  virtual std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) = 0;
  virtual std::shared_ptr<Work> broadcast(const Tensor& tensor, int src) = 0;
  // outputs: world_size tensors shaped as input; outputs[r] receives rank r's input.
  virtual std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) = 0;
  // inputs: world_size tensors shaped as output; output = op over ranks of their inputs[rank()].
  virtual std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                                               ReduceOp op) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;
};

// backend: "mpi" (CPU tensors; ranks started by mpirun) or "nccl" (GPU tensors; CUDA builds
// with NCCL). Calling it twice is an error; so is a backend hwaro was built without. The ranks
// are mpirun's: torchrun's WORLD_SIZE and RANK, where set, must agree with them (else an error).
// "nccl" makes the rank's GPU (cuda:<local rank>) the calling thread's current device, as
// torch.cuda.set_device(local_rank) in a PyTorch program; a rank with no GPU of its own is an
// error on every rank, not a hang.
void init_process_group(const std::string& backend = "mpi", std::chrono::milliseconds timeout = kDefaultTimeout);
bool is_initialized();
// Waits for what is still in flight, then shuts the backend down.
void destroy_process_group();
// The group made by init_process_group (a clear error before it).
ProcessGroup& default_group();

int get_rank();
int get_world_size();
// This rank's index among the ranks of its machine: the GPU it uses.
int get_local_rank();

// In place on every rank. async_op: return at once with the handle; otherwise wait first
// (the handle is then complete).
std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum, bool async_op = false);
std::shared_ptr<Work> broadcast(const Tensor& tensor, int src, bool async_op = false);
std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input, bool async_op = false);
std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                                     ReduceOp op = ReduceOp::Sum, bool async_op = false);
std::shared_ptr<Work> barrier(bool async_op = false);

}  // namespace hwaro::distributed
