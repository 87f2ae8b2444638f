// The default process group (one per process, behind a mutex) and the free functions over it.
#include <cstdlib>
#include <mutex>
#include <string>

#include "hwaro/distributed.h"
#include "parallel/backend_factories.h"

namespace hwaro::distributed {

namespace {

std::mutex group_mutex;
std::unique_ptr<ProcessGroup> group;  // the one documented owner of the default group

std::unique_ptr<ProcessGroup> make_group(const std::string& backend, std::chrono::milliseconds timeout) {
  if (backend == "mpi") return detail::make_mpi_group(timeout);
  if (backend == "nccl") return detail::make_nccl_group(timeout);
  HWARO_CHECK(false, "init_process_group: unknown backend '", backend, "'; the backends are \"mpi\" (CPU tensors) ",
              "and \"nccl\" (GPU tensors)");
  return nullptr;
}

// torchrun's WORLD_SIZE and RANK (PyTorch's env:// rendezvous) are not how hwaro's ranks meet:
// mpirun starts them. A process started with those variables but without mpirun is a group of one
// and would train alone, silently; so where they are set they must agree with the group.
void check_torchrun_variables(const ProcessGroup& made) {
  for (const auto& [name, value] : {std::pair{"WORLD_SIZE", made.world_size()}, std::pair{"RANK", made.rank()}}) {
    const char* text = std::getenv(name);
    HWARO_CHECK(text == nullptr || std::string(text) == std::to_string(value), "init_process_group(\"",
                made.backend(), "\"): ", name, "=", text, " in the environment (torchrun's convention), but this ",
                "process is rank ", made.rank(), " of ", made.world_size(), ": hwaro's ranks are the processes ",
                "mpirun starts (mpirun -np N program); launch it so, or unset ", name);
  }
}

std::shared_ptr<Work> finish(std::shared_ptr<Work> work, bool async_op) {
  if (!async_op) work->wait();
  return work;
}

}  // namespace

void init_process_group(const std::string& backend, std::chrono::milliseconds timeout) {
  std::lock_guard lock(group_mutex);
  HWARO_CHECK(group == nullptr, "init_process_group: the default process group is already initialised (backend '",
              group ? group->backend() : "", "'); call destroy_process_group() first");
  HWARO_CHECK(timeout.count() > 0, "init_process_group: the timeout must be positive, got ", timeout.count(), " ms");
  std::unique_ptr<ProcessGroup> made = make_group(backend, timeout);
  check_torchrun_variables(*made);
  group = std::move(made);
}

bool is_initialized() {
  std::lock_guard lock(group_mutex);
  return group != nullptr;
}

void destroy_process_group() {
  std::unique_ptr<ProcessGroup> old;
  {
    std::lock_guard lock(group_mutex);
    old = std::move(group);
  }
  old.reset();  // outside the lock: a backend's shutdown may wait for collectives in flight
}

ProcessGroup& default_group() {
  std::lock_guard lock(group_mutex);
  HWARO_CHECK(group != nullptr, "hw::distributed: the default process group is not initialised; call ",
              "hw::distributed::init_process_group(\"mpi\") first (and start the ranks with mpirun)");
  return *group;
}

int get_rank() { return default_group().rank(); }
int get_world_size() { return default_group().world_size(); }
int get_local_rank() { return default_group().local_rank(); }

std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, bool async_op) {
  return finish(default_group().all_reduce(tensor, op), async_op);
}
std::shared_ptr<Work> broadcast(const Tensor& tensor, int src, bool async_op) {
  return finish(default_group().broadcast(tensor, src), async_op);
}
std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input, bool async_op) {
  return finish(default_group().all_gather(outputs, input), async_op);
}
std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                     bool async_op) {
  return finish(default_group().reduce_scatter(output, inputs, op), async_op);
}
std::shared_ptr<Work> barrier(bool async_op) { return finish(default_group().barrier(), async_op); }

}  // namespace hwaro::distributed
