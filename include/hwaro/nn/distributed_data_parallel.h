#pragma once
// hw::nn::DistributedDataParallel (torch.nn.parallel.DistributedDataParallel): one process per
// rank (hw::distributed), each with its own replica and its own shard of the data.
//   hw::distributed::init_process_group("mpi");
//   auto ddp = hw::nn::DistributedDataParallel(model);
//   hw::optim::SGD opt(ddp->parameters(), {.lr = 0.1});
//   opt.zero_grad(); loss_fn(ddp->forward(x), y).backward(); opt.step();   // as without it
// - At construction every parameter and buffer is broadcast from rank 0, so all ranks start equal.
// - Gradients are grouped in buckets (about bucket_cap_mb each, the first about 1 MiB as in
//   PyTorch, in reverse registration order, which is about the order backward produces them). As soon as the last gradient of a
//   bucket has been accumulated during backward, the bucket is all-reduced asynchronously
//   (averaged over ranks), so communication overlaps the rest of backward; when the last
//   bucket is ready, backward waits for all of them and writes the averages into .grad().
// - Inside a no_sync() scope backward only accumulates locally (gradient accumulation); the
//   first backward after it averages the accumulated gradients.
// - Every parameter that requires grad when DistributedDataParallel is built must receive a
//   gradient in each synchronised backward; one that did not is a clear error at the next forward.
//   There is no find_unused_parameters: freeze (requires_grad_(false)) or remove unused ones
//   before wrapping.
// - Buffers are broadcast from rank 0 at every forward (PyTorch's broadcast_buffers).
#include <memory>
#include <string>

#include "hwaro/distributed.h"
#include "hwaro/nn/module.h"

namespace hwaro::nn {

struct DistributedDataParallelOptions {
  double bucket_cap_mb = 25.0;
  bool broadcast_buffers = true;
};

class DistributedDataParallelImpl : public Module {
 public:
  explicit DistributedDataParallelImpl(std::shared_ptr<Module> module, DistributedDataParallelOptions options = {});
  ~DistributedDataParallelImpl() override;

  Tensor forward(const Tensor& input) override;

  // While the returned guard lives, backward does not communicate.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelImpl& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelImpl& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  const std::shared_ptr<Module>& module() const { return module_; }
  // How the parameters were bucketed (sizes in parameters), first bucket first.
  std::vector<std::size_t> bucket_sizes() const;

  struct Reducer;  // the buckets and their state (src/parallel/ddp_reducer.cpp)

 private:
  std::shared_ptr<Module> module_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<Reducer> reducer_;  // shared: the gradient nodes hold it weakly
};

class DistributedDataParallel : public ModuleHolder<DistributedDataParallelImpl> {
 public:
  DistributedDataParallel(std::nullptr_t) : ModuleHolder(nullptr) {}  // NOLINT: as every holder
  DistributedDataParallel(std::shared_ptr<DistributedDataParallelImpl> impl) : ModuleHolder(std::move(impl)) {}  // NOLINT
  // model: a module holder or a std::shared_ptr to a module.
  template <typename Model>
    requires(requires(const Model& m) { m.get(); } && !std::is_same_v<std::decay_t<Model>, DistributedDataParallel>)
  DistributedDataParallel(const Model& model, DistributedDataParallelOptions options = {})  // NOLINT
      : ModuleHolder(std::make_shared<DistributedDataParallelImpl>(detail::module_pointer_of(model), options)) {}
  operator std::shared_ptr<Module>() const { return ptr(); }  // NOLINT: `model = DistributedDataParallel(model)`
};

}  // namespace hwaro::nn
