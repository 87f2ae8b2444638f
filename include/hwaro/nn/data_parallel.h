#pragma once
// hw::nn::DataParallel (guide §4.1, torch.nn.DataParallel): one process, several devices.
//   if (hw::cuda::device_count() > 1) model = hw::nn::DataParallel(model);   // all visible GPUs
//   auto dp = hw::nn::DataParallel(model, {hw::Device("cuda:0"), hw::Device("cuda:1")});
// forward(x [N, ...]) splits x along dim 0 into chunks of ceil(N / devices) rows (the last one
// smaller; fewer chunks than devices when N is small), runs one replica per chunk, each on its
// own thread and device, and concatenates the outputs on devices()[0]. Backward sums every
// replica's gradients into the wrapped module's parameters. An error in a replica reaches the
// caller as the same hw error type, its message naming the replica and its device.
//
// Replicas are built once, at construction, and kept:
//  - replica 0 is the wrapped module itself, which must be on devices()[0] when forward runs (it
//    may be moved there after wrapping, as in the guide; with one device the constructor moves it);
//  - every forward first copies into the other replicas each parameter and buffer whose
//    version changed (on the original's side: an optimiser step; or on the replica's: a
//    buffer its forward updated) or that was moved or converted (model->to(...)), and each
//    parameter's requires_grad, so replicas follow the optimiser without being rebuilt;
//  - buffers follow PyTorch's rule: only replica 0's updates (BatchNorm's running
//    statistics of the first chunk) are kept; the others are overwritten at the next forward.
// Replicas are built by, in order of preference: the factory given; the module's
// clone_module() (hwaro's layers and containers have one); a default-constructed Impl when
// the wrapped type (as the holder or pointer passed names it) has a default constructor. Their
// values are then copied from the original (building them draws no numbers from the default
// generator: its state is restored). With one device DataParallel is a transparent wrapper.
// The devices may be CPU devices (each replica still on its own thread) or test devices.
#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "hwaro/device.h"
#include "hwaro/nn/module.h"

namespace hwaro::nn {

// Makes one replica of the wrapped module: same structure and configuration; its values do
// not matter (DataParallel copies the original's in).
using ReplicaFactory = std::function<std::shared_ptr<Module>()>;

class DataParallelImpl : public Module {
 public:
  // devices empty: every visible GPU, or without GPUs the module's own device alone.
  // default_factory: used only when neither factory nor module->clone_module() gives replicas.
  DataParallelImpl(std::shared_ptr<Module> module, std::vector<Device> devices = {}, ReplicaFactory factory = {},
                   ReplicaFactory default_factory = {});
  ~DataParallelImpl() override;

  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  // The wrapped module (registered as the child "module", so state_dict keys read
  // "module.fc1.weight" as in PyTorch).
  const std::shared_ptr<Module>& module() const { return module_; }
  const std::vector<Device>& devices() const { return devices_; }
  // The replica running on devices()[i]; replica(0) is module().
  std::shared_ptr<Module> replica(std::size_t i) const;

 private:
  void check_module_on_first_device() const;
  struct Replicas;  // the replicas and their bookkeeping (src/parallel/data_parallel.cpp)
  std::shared_ptr<Module> module_;
  std::vector<Device> devices_;
  std::unique_ptr<Replicas> replicas_;
};

namespace detail {
template <typename T>
concept ModulePointer = requires(const T& t) {
  { t.get() } -> std::convertible_to<const Module*>;
};
// The default factory for a wrapped type: a default-constructed one when it has such a constructor.
template <typename Impl> ReplicaFactory default_replica_factory() {
  if constexpr (std::is_default_constructible_v<Impl> && !std::is_same_v<Impl, Module>) {
    return [] { return std::static_pointer_cast<Module>(std::make_shared<Impl>()); };
  } else {
    return {};
  }
}
}  // namespace detail

// The holder, as for every module; it converts to std::shared_ptr<Module> so that
// `model = hw::nn::DataParallel(model)` works for a model held that way.
class DataParallel : public ModuleHolder<DataParallelImpl> {
 public:
  DataParallel(std::nullptr_t) : ModuleHolder(nullptr) {}  // NOLINT: LibTorch's `DataParallel dp{nullptr}`
  DataParallel(std::shared_ptr<DataParallelImpl> impl) : ModuleHolder(std::move(impl)) {}  // NOLINT
  // model: a module holder (hw::nn::Sequential, a HWARO_MODULE) or a std::shared_ptr to a module.
  template <typename Model>
    requires(detail::ModulePointer<Model> && !std::is_same_v<std::decay_t<Model>, DataParallel>)
  DataParallel(const Model& model, std::vector<Device> devices = {}, ReplicaFactory factory = {})  // NOLINT
      : ModuleHolder(std::make_shared<DataParallelImpl>(
            detail::module_pointer_of(model), std::move(devices), std::move(factory),
            detail::default_replica_factory<std::remove_cv_t<std::remove_pointer_t<decltype(model.get())>>>())) {}

  operator std::shared_ptr<Module>() const { return ptr(); }  // NOLINT: see above
};

}  // namespace hwaro::nn
