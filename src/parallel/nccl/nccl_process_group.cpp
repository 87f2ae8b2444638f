// The NCCL backend of hw::distributed: collectives on the rank's GPU (its local rank), enqueued
// on that device's current stream, so that they run after the kernels that made their tensors
// and before those that read the results, with no host synchronisation. A handle is a CUDA
// event recorded after the NCCL call: wait() polls it, and NCCL's asynchronous error, until the
// group's timeout; a timeout or an asynchronous error aborts the communicator. Ranks find each other through the MPI backend (rank 0's ncclUniqueId is
// broadcast over it); a process not started by an MPI launcher is a group of one.
// Built only in CUDA builds where NCCL is found (HWARO_WITH_NCCL). The machines hwaro is
// developed on have no GPU, so this file is compiled there but never run: tests/
// test_nccl_process_group.cpp runs it at world size 1 where scripts/gpu-check.sh runs the suite.
#if HWARO_WITH_NCCL
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "hwaro/autograd.h"
#include "hwaro/cuda.h"
#include "hwaro/cuda_stream.h"
#include "hwaro/ops.h"
#include "parallel/backend_factories.h"
#include "parallel/collective_checks.h"
#include "parallel/work_polling.h"

namespace hwaro::distributed::detail {

namespace {

using Clock = std::chrono::steady_clock;

void check_nccl(ncclResult_t result, const char* call) {
  if (result == ncclSuccess) return;
  std::ostringstream msg;
  msg << "hw::distributed (NCCL): " << call << " failed: " << ncclGetErrorString(result);
  throw DistributedError(msg.str());
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case kFloat32: return ncclFloat32;
    case kFloat64: return ncclFloat64;
    case kFloat16: return ncclFloat16;
    case kBFloat16: return ncclBfloat16;
    case kInt32: return ncclInt32;
    case kInt64: return ncclInt64;
    case kUInt8: return ncclUint8;
    default: break;
  }
  std::ostringstream msg;
  msg << "hw::distributed (NCCL): dtype " << dtype << " has no NCCL type; convert the tensor to one of float32, "
      << "float64, float16, bfloat16, int32, int64, uint8";
  throw DistributedError(msg.str());
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;  // NCCL 2.10 and later
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
  }
  return ncclSum;
}

// What OpenMPI's mpirun, MPICH's Hydra and PMIx launchers put in every rank's environment.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// The communicator, shared by the group and its handles. A collective that times out or fails
// asynchronously aborts it at once, as PyTorch's watchdog does: its kernel would otherwise stay
// on the rank's compute stream for good, and every later synchronisation of that stream (an
// item(), a checkpoint's copy to the CPU, empty_cache) would hang. Later collectives are refused.
class Communicator {
 public:
  explicit Communicator(ncclComm_t comm) : comm_(comm) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  // Destroying waits for the work queued on the communicator; an aborted one has none left.
  ~Communicator() {
    if (aborted_.empty()) ncclCommDestroy(comm_);
  }

  // Runs `call(comm)` (an NCCL call, or ncclCommGetAsyncError) unless the communicator was aborted.
  template <typename Call> ncclResult_t use(const char* name, Call&& call) {
    std::lock_guard lock(mutex_);
    HWARO_CHECK_AS(DistributedError, aborted_.empty(), "hw::distributed (NCCL): ", name, " refused: the ",
                   "communicator was aborted after ", aborted_, "; call destroy_process_group() and start the ",
                   "ranks again");
    return call(comm_);
  }

  void abort(const std::string& why) {
    std::lock_guard lock(mutex_);
    if (!aborted_.empty()) return;
    aborted_ = why;
    ncclCommAbort(comm_);
  }

 private:
  std::mutex mutex_;
  ncclComm_t comm_;
  std::string aborted_;  // why, once aborted
};

class NcclWork final : public Work {
 public:
  NcclWork(std::string what, std::shared_ptr<Communicator> comm, std::chrono::milliseconds timeout, int rank,
           int world, std::vector<Tensor> buffers, cuda::Event done)
      : what_(std::move(what)), comm_(std::move(comm)), deadline_(Clock::now() + timeout), timeout_(timeout),
        rank_(rank), world_(world), buffers_(std::move(buffers)), done_event_(std::move(done)) {}

  bool is_completed() override {
    std::lock_guard lock(mutex_);
    if (done_) return true;
    if (done_event_.query()) {
      done_ = true;
      buffers_.clear();
      return true;
    }
    ncclResult_t async = ncclSuccess;
    check_nccl(comm_->use("ncclCommGetAsyncError", [&](ncclComm_t c) { return ncclCommGetAsyncError(c, &async); }),
               "ncclCommGetAsyncError");
    if (async != ncclSuccess) {
      comm_->abort(what_ + " failed (" + ncclGetErrorString(async) + ")");
      check_nccl(async, what_.c_str());
    }
    return false;
  }

  void wait() override {
    detail::poll_until_complete([this] { return is_completed(); }, deadline_, [this] {
      comm_->abort(what_ + " timed out");
      throw_collective_timeout("NCCL", what_, timeout_, rank_, world_);
    });
  }

 private:
  std::mutex mutex_;
  std::string what_;
  std::shared_ptr<Communicator> comm_;
  Clock::time_point deadline_;
  std::chrono::milliseconds timeout_;
  int rank_, world_;
  std::vector<Tensor> buffers_;  // kept alive until the GPU is done with them
  cuda::Event done_event_;
  bool done_ = false;
};

class NcclProcessGroup final : public ProcessGroup {
 public:
  explicit NcclProcessGroup(std::chrono::milliseconds timeout) : timeout_(timeout) {
    HWARO_CHECK_AS(DistributedError, cuda::is_available(), "init_process_group(\"nccl\"): no usable CUDA device (",
                   cuda::device_count(), " visible); NCCL needs one GPU per rank. Use \"mpi\" for CPU tensors");
    ncclUniqueId id;
    if (started_by_mpi_launcher()) {
#if !HWARO_WITH_MPI
      HWARO_CHECK_AS(DistributedError, false, "init_process_group(\"nccl\"): ranks started by an MPI launcher find ",
                     "each other over MPI, and this hwaro was built without it; install an MPI implementation ",
                     "(Debian: libopenmpi-dev) and configure again (HWARO_MPI=ON), or run a single process");
#endif
      // The MPI group stays for the group's lifetime: it is how the ranks met, and an MPI rank that
      // exits without destroying it aborts the job instead of leaving the others waiting.
      bootstrap_ = make_mpi_group(timeout);
      rank_ = bootstrap_->rank();
      world_ = bootstrap_->world_size();
      local_rank_ = bootstrap_->local_rank();
      // Every rank learns whether every rank has its GPU before any of them goes into
      // ncclCommInitRank, which waits for all the others with no timeout: a rank that stopped at
      // the check below would leave the rest there for good.
      Tensor has_gpu = full({1}, local_rank_ < cuda::device_count() ? 1 : 0, {.dtype = kInt32});
      bootstrap_->all_reduce(has_gpu, ReduceOp::Min)->wait();
      check_has_gpu();
      HWARO_CHECK_AS(DistributedError, has_gpu.item<std::int32_t>() == 1, "init_process_group(\"nccl\"): another ",
                     "rank has no GPU for its local rank (more ranks on its machine than GPUs); start at most one ",
                     "rank per GPU");
      Tensor id_bytes = zeros({static_cast<std::int64_t>(sizeof id)}, {.dtype = kUInt8});
      if (rank_ == 0) {
        check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
        std::memcpy(id_bytes.data_ptr(), &id, sizeof id);
      }
      bootstrap_->broadcast(id_bytes, 0)->wait();
      std::memcpy(&id, id_bytes.data_ptr(), sizeof id);
    } else {
      check_has_gpu();
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    }
    device_ = local_rank_;
    // The rank's GPU becomes the calling thread's current device and stays so, as a PyTorch
    // program's torch.cuda.set_device(local_rank): "cuda" then names it, and no copy or wait of
    // this rank makes a context on (and takes memory of) cuda:0.
    cuda::set_device(device_);
    ncclComm_t comm = nullptr;
    check_nccl(ncclCommInitRank(&comm, world_, id, rank_), "ncclCommInitRank");
    comm_ = std::make_shared<Communicator>(comm);
  }

  void check_has_gpu() const {
    HWARO_CHECK_AS(DistributedError, local_rank_ < cuda::device_count(), "init_process_group(\"nccl\"): rank ",
                   rank_, " is local rank ", local_rank_, " of its machine but it has ", cuda::device_count(),
                   " GPUs; start at most one rank per GPU");
  }

  std::string backend() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  int local_rank() const override { return local_rank_; }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override {
    check_on_my_gpu("all_reduce", "the tensor", tensor);
    check_reducible("all_reduce", tensor, op);
    return enqueue(describe_collective("all_reduce", op, tensor), {tensor}, "ncclAllReduce", [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<std::size_t>(tensor.numel()),
                           nccl_type(tensor.dtype()), nccl_op(op), comm, s);
    });
  }

  std::shared_ptr<Work> broadcast(const Tensor& tensor, int src) override {
    check_on_my_gpu("broadcast", "the tensor", tensor);
    HWARO_CHECK(src >= 0 && src < world_, "broadcast: src must be a rank in [0, ", world_, "), got ", src);
    return enqueue(describe_collective("broadcast", std::nullopt, tensor), {tensor}, "ncclBroadcast", [&](ncclComm_t comm, cudaStream_t s) {
      return ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.nbytes(), ncclUint8, src, comm, s);
    });
  }

  std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override {
    check_on_my_gpu("all_gather", "the input", input);
    check_list("all_gather", "outputs", outputs, input, world_);
    const Tensor gathered = empty({world_, input.numel()}, {.dtype = input.dtype(), .device = input.device()});
    std::vector<Tensor> keep = outputs;
    keep.push_back(input);
    keep.push_back(gathered);
    // The copies out of `gathered` are queued on the same stream, after the NCCL call.
    return enqueue(describe_collective("all_gather", std::nullopt, input), keep, "ncclAllGather", [&](ncclComm_t comm, cudaStream_t s) {
      const ncclResult_t result = ncclAllGather(input.data_ptr(), gathered.data_ptr(), input.nbytes(), ncclUint8,
                                                comm, s);
      if (result == ncclSuccess) {
        NoGradGuard no_grad;
        for (std::size_t r = 0; r < outputs.size(); ++r) {
          Tensor out = outputs[r];
          out.copy_(gathered[static_cast<std::int64_t>(r)].view(input.sizes()));
        }
      }
      return result;
    });
  }

  std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) override {
    check_on_my_gpu("reduce_scatter", "the output", output);
    check_list("reduce_scatter", "inputs", inputs, output, world_);
    check_reducible("reduce_scatter", output, op);
    std::vector<Tensor> flat;
    for (const Tensor& t : inputs) flat.push_back(t.reshape({-1}));
    const Tensor send = cat(flat, 0);
    return enqueue(describe_collective("reduce_scatter", op, output), {output, send}, "ncclReduceScatter", [&](ncclComm_t comm, cudaStream_t s) {
      return ncclReduceScatter(send.data_ptr(), output.data_ptr(), static_cast<std::size_t>(output.numel()),
                               nccl_type(output.dtype()), nccl_op(op), comm, s);
    });
  }

  // NCCL has no barrier: a one-element all-reduce on the GPU stands in for it, as in PyTorch.
  std::shared_ptr<Work> barrier() override {
    const Tensor token = zeros({1}, {.dtype = kFloat32, .device = Device(DeviceType::CUDA, device_)});
    return enqueue("barrier", {token}, "ncclAllReduce", [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllReduce(token.data_ptr(), token.data_ptr(), 1, ncclFloat32, ncclSum, comm, s);
    });
  }

 private:
  void check_on_my_gpu(const char* collective, const char* what, const Tensor& t) const {
    check_tensor(collective, what, t, DeviceType::CUDA, "nccl");
    const int index = t.device().has_index() ? t.device().index() : cuda::current_device();
    HWARO_CHECK(index == device_, collective, ": ", what, " is on cuda:", index, " but rank ", rank_,
                " uses cuda:", device_, " (its local rank); move it there with .to(\"cuda:", device_, "\")");
  }

  template <typename Call>
  std::shared_ptr<Work> enqueue(std::string what, std::vector<Tensor> buffers, const char* name, Call&& call) {
    cuda::DeviceGuard guard(device_);
    const cuda::Stream stream = cuda::current_stream(device_);
    check_nccl(comm_->use(name, [&](ncclComm_t c) { return call(c, static_cast<cudaStream_t>(stream.native_handle())); }),
               name);
    cuda::Event done;
    done.record(stream);
    return std::make_shared<NcclWork>(std::move(what), comm_, timeout_, rank_, world_, std::move(buffers),
                                      std::move(done));
  }

  std::chrono::milliseconds timeout_;
  std::unique_ptr<ProcessGroup> bootstrap_;  // the MPI group the ranks met through (none in a group of one)
  std::shared_ptr<Communicator> comm_;  // the handles share it: it ends after the last of them
  int rank_ = 0, world_ = 1, local_rank_ = 0, device_ = 0;
};

}  // namespace

std::unique_ptr<ProcessGroup> make_nccl_group(std::chrono::milliseconds timeout) {
  return std::make_unique<NcclProcessGroup>(timeout);
}

}  // namespace hwaro::distributed::detail
#endif  // HWARO_WITH_NCCL
