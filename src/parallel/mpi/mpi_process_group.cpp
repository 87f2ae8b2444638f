// The MPI backend: every collective is MPI's non-blocking form (MPI_Iallreduce, ...) on a
// communicator of its own, completed by polling MPI_Test until the group's timeout, so that a
// dead rank is a DistributedError on the others instead of a hang. MPI calls are serialised by
// one mutex (MPI_THREAD_SERIALIZED), so handles may be waited on from any thread.
#if HWARO_WITH_MPI
#include <mpi.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "hwaro/autograd.h"
#include "hwaro/ops.h"
#include "parallel/backend_factories.h"
#include "parallel/collective_checks.h"
#include "parallel/work_polling.h"

namespace hwaro::distributed::detail {

namespace {

using Clock = std::chrono::steady_clock;

std::mutex mpi_mutex;  // every MPI call of this process goes through it
std::atomic<int> live_groups{0};  // MpiProcessGroups not yet destroyed

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw DistributedError(std::string("hw::distributed (MPI): ") + call + " failed: " + std::string(text, length));
}

// At exit, after the program's clean end (every group destroyed), MPI_Finalize. A rank that
// exits with its group still alive never reached that end: an error ended it while the other
// ranks may be waiting in a collective for it. MPI_Finalize would then wait for them as well
// (OpenMPI's finalize is collective), and the job would hang until the collective timeout; so
// the whole job is aborted at once instead, and this rank's own error message stays the last word.
void finalise_or_abort_at_exit() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (finalised) return;
  if (live_groups.load() > 0) {
    std::fprintf(stderr, "hw::distributed (MPI): this rank is exiting without destroy_process_group() (an error "
                 "ended it early?); aborting every rank of the job so that none waits for it\n");
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
}

// MPI is initialised once per process and finalised at exit, so that a group can be destroyed
// and made again (MPI cannot be initialised twice).
void ensure_mpi_initialised() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  HWARO_CHECK_AS(DistributedError, provided >= MPI_THREAD_SERIALIZED, "hw::distributed (MPI): this MPI provides ",
                 "thread level ", provided, " but hwaro needs MPI_THREAD_SERIALIZED (", MPI_THREAD_SERIALIZED, ")");
  std::atexit(finalise_or_abort_at_exit);
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case kFloat32: return MPI_FLOAT;
    case kFloat64: return MPI_DOUBLE;
    case kInt32: return MPI_INT32_T;
    case kInt64: return MPI_INT64_T;
    case kUInt8: return MPI_UINT8_T;
    default: return MPI_DATATYPE_NULL;  // float16, bfloat16: reduced in float32 (see staged())
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max: return MPI_MAX;
    case ReduceOp::Min: return MPI_MIN;
    default: return MPI_SUM;  // Avg is a sum divided by the world size on completion
  }
}

int count_of(std::int64_t n, const char* collective) {
  HWARO_CHECK(n <= INT_MAX, collective, ": ", n, " elements (or bytes) is more than MPI's int count allows (",
              INT_MAX, "); split the tensor");
  return static_cast<int>(n);
}

// What a reduction runs on: the tensor itself, or a float32 copy for dtypes MPI has no type for.
Tensor staged(const Tensor& t) { return mpi_type(t.dtype()) == MPI_DATATYPE_NULL ? t.to(kFloat32) : t; }

class MpiWork final : public Work {
 public:
  MpiWork(std::string what, Clock::time_point deadline, std::chrono::milliseconds timeout, int rank, int world,
          std::vector<Tensor> buffers, std::function<void()> on_complete)
      : what_(std::move(what)), deadline_(deadline), timeout_(timeout), rank_(rank), world_(world),
        buffers_(std::move(buffers)), on_complete_(std::move(on_complete)) {}

  MPI_Request* request() { return &request_; }
  // A fresh timeout from now: destroying the group gives abandoned collectives one more chance.
  void restart_clock() { deadline_ = Clock::now() + timeout_; }

  bool is_completed() override {
    std::lock_guard lock(mutex_);
    if (done_) return true;
    int flag = 0;
    {
      std::lock_guard mpi(mpi_mutex);
      check_mpi(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    }
    if (!flag) return false;
    done_ = true;
    NoGradGuard no_grad;
    if (on_complete_) on_complete_();
    buffers_.clear();
    return true;
  }

  void wait() override {
    detail::poll_until_complete([this] { return is_completed(); }, deadline_, [this] {
      throw_collective_timeout("MPI", what_, timeout_, rank_, world_);
    });
  }

 private:
  std::mutex mutex_;
  std::string what_;
  Clock::time_point deadline_;
  std::chrono::milliseconds timeout_;
  int rank_, world_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<Tensor> buffers_;  // kept alive while MPI may still read or write them
  std::function<void()> on_complete_;
  bool done_ = false;
};

class MpiProcessGroup final : public ProcessGroup {
 public:
  explicit MpiProcessGroup(std::chrono::milliseconds timeout) : timeout_(timeout) {
    std::lock_guard mpi(mpi_mutex);
    ensure_mpi_initialised();
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_);
    MPI_Comm local;
    check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_free(&local);
    ++live_groups;
  }

  // Waits for the collectives still in flight (their buffers must outlive MPI's use of them);
  // when one never completes, a clean shutdown is impossible and the whole job is aborted.
  ~MpiProcessGroup() override {
    for (const auto& work : in_flight_) {
      try {
        work->restart_clock();
        work->wait();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\nhw::distributed: destroying the process group with this collective unfinished; "
                     "aborting every rank\n", e.what());
        MPI_Abort(comm_, 1);
      }
    }
    std::lock_guard mpi(mpi_mutex);
    MPI_Comm_free(&comm_);
    --live_groups;
  }

  std::string backend() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  int local_rank() const override { return local_rank_; }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override {
    check_tensor("all_reduce", "the tensor", tensor, DeviceType::CPU, "mpi");
    check_reducible("all_reduce", tensor, op);
    const Tensor buf = staged(tensor);
    auto work = start(describe_collective("all_reduce", op, tensor), {tensor, buf}, completion(tensor, buf, op));
    const int count = count_of(buf.numel(), "all_reduce");
    submit(work, "MPI_Iallreduce", [&](MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), count, mpi_type(buf.dtype()), mpi_op(op), comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> broadcast(const Tensor& tensor, int src) override {
    check_tensor("broadcast", "the tensor", tensor, DeviceType::CPU, "mpi");
    HWARO_CHECK(src >= 0 && src < world_, "broadcast: src must be a rank in [0, ", world_, "), got ", src);
    auto work = start(describe_collective("broadcast", std::nullopt, tensor), {tensor}, {});
    const int bytes = count_of(static_cast<std::int64_t>(tensor.nbytes()), "broadcast");
    submit(work, "MPI_Ibcast",
           [&](MPI_Request* r) { return MPI_Ibcast(tensor.data_ptr(), bytes, MPI_BYTE, src, comm_, r); });
    return work;
  }

  std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override {
    check_tensor("all_gather", "the input", input, DeviceType::CPU, "mpi");
    check_list("all_gather", "outputs", outputs, input, world_);
    const Tensor gathered = empty({world_, input.numel()}, {.dtype = input.dtype()});
    std::vector<Tensor> keep = outputs;
    keep.push_back(input);
    keep.push_back(gathered);
    auto work = start(describe_collective("all_gather", std::nullopt, input), keep, [outs = std::vector<Tensor>(outputs), gathered, input]() mutable {
      for (std::size_t r = 0; r < outs.size(); ++r) {
        outs[r].copy_(gathered[static_cast<std::int64_t>(r)].view(input.sizes()));
      }
    });
    const int bytes = count_of(static_cast<std::int64_t>(input.nbytes()), "all_gather");
    submit(work, "MPI_Iallgather", [&](MPI_Request* r) {
      return MPI_Iallgather(input.data_ptr(), bytes, MPI_BYTE, gathered.data_ptr(), bytes, MPI_BYTE, comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) override {
    check_tensor("reduce_scatter", "the output", output, DeviceType::CPU, "mpi");
    check_list("reduce_scatter", "inputs", inputs, output, world_);
    check_reducible("reduce_scatter", output, op);
    const Tensor recv = staged(output);
    std::vector<Tensor> flat;
    for (const Tensor& t : inputs) flat.push_back(t.reshape({-1}).to(recv.dtype()));
    const Tensor send = cat(flat, 0);
    auto work = start(describe_collective("reduce_scatter", op, output), {output, recv, send}, completion(output, recv, op));
    const int count = count_of(recv.numel(), "reduce_scatter");
    submit(work, "MPI_Ireduce_scatter_block", [&](MPI_Request* r) {
      return MPI_Ireduce_scatter_block(send.data_ptr(), recv.data_ptr(), count, mpi_type(recv.dtype()), mpi_op(op),
                                       comm_, r);
    });
    return work;
  }

  std::shared_ptr<Work> barrier() override {
    auto work = start("barrier", {}, {});
    submit(work, "MPI_Ibarrier", [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
    return work;
  }

 private:
  // What a reduction does once MPI is done: Avg's division, and the copy back from a staging buffer.
  std::function<void()> completion(const Tensor& tensor, const Tensor& buf, ReduceOp op) const {
    const int world = world_;
    return [tensor = Tensor(tensor), buf = Tensor(buf), op, world]() mutable {
      if (op == ReduceOp::Avg) buf.div_(world);
      if (!buf.is_alias_of(tensor)) tensor.copy_(buf);
    };
  }

  std::shared_ptr<MpiWork> start(std::string what, std::vector<Tensor> buffers, std::function<void()> on_complete) {
    // Handles already complete are dropped first, so in_flight_ stays short.
    {
      std::lock_guard lock(in_flight_mutex_);
      std::erase_if(in_flight_, [](const std::shared_ptr<MpiWork>& w) { return w->is_completed(); });
    }
    auto work = std::make_shared<MpiWork>(std::move(what), Clock::now() + timeout_, timeout_, rank_, world_,
                                          std::move(buffers), std::move(on_complete));
    return work;
  }

  template <typename Call> void submit(const std::shared_ptr<MpiWork>& work, const char* name, Call&& call) {
    {
      std::lock_guard mpi(mpi_mutex);
      check_mpi(call(work->request()), name);
    }
    std::lock_guard lock(in_flight_mutex_);
    in_flight_.push_back(work);
  }

  std::chrono::milliseconds timeout_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, world_ = 1, local_rank_ = 0;
  std::mutex in_flight_mutex_;
  std::vector<std::shared_ptr<MpiWork>> in_flight_;  // owned here until complete (their buffers with them)
};

}  // namespace

std::unique_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds timeout) {
  return std::make_unique<MpiProcessGroup>(timeout);
}

}  // namespace hwaro::distributed::detail
#endif  // HWARO_WITH_MPI
