// ConstructionWatch (hwaro/nn/module.h) and the warning of Module::to() about tensors a module's
// constructor kept without registering them: C++ cannot list a class's members, so the watch
// logs the tensors created while the constructor runs (ops/tensor_creation_log.h) and the ones
// registered meanwhile; what is still alive at the end and was never registered is what to()
// would leave behind.
#include <cstdio>
#include <sstream>
#include <unordered_set>

#include "core/tensor_impl.h"
#include "hwaro/nn/module.h"
#include "ops/tensor_creation_log.h"

namespace hwaro::nn {
namespace detail {

struct ConstructionWatch::State {
  ops::TensorCreationLog log;
  std::unordered_set<const Storage*> registered;  // by storage: a view of a registered tensor moves with it
  State* outer = nullptr;
};

namespace {
thread_local ConstructionWatch::State* innermost = nullptr;
}  // namespace

ConstructionWatch::ConstructionWatch() : state_(std::make_unique<State>()) {
  state_->outer = innermost;
  innermost = state_.get();
}

ConstructionWatch::~ConstructionWatch() { innermost = state_->outer; }

void ConstructionWatch::note_registered(const Tensor& t) {
  if (!t.defined()) return;
  // Every open watch: a tensor registered by a module built inside another's constructor (a
  // child, a DataParallel replica) is not the outer module's to register.
  for (State* s = innermost; s != nullptr; s = s->outer) s->registered.insert(t.impl()->storage().get());
}

void ConstructionWatch::finish(Module& module) {
  for (const auto& weak : state_->log.created()) {
    const std::shared_ptr<TensorImpl> impl = weak.lock();
    if (impl != nullptr && state_->registered.count(impl->storage().get()) == 0) module.unregistered_.push_back(weak);
  }
}

}  // namespace detail

namespace {
// "float32 on cpu", or the half of it that a move changes: "float32" for to(dtype), and for
// to(device) "on cpu" where the tensor stays, "cuda:0" where the module goes.
std::string placement(std::optional<Device> device, std::optional<DType> dtype, bool where_it_stays) {
  std::string out = dtype ? dtype_name(*dtype) : "";
  if (device) out += (!out.empty() ? " on " : where_it_stays ? "on " : "") + device->str();
  return out;
}
}  // namespace

void Module::warn_about_unregistered(std::optional<Device> device, std::optional<DType> dtype) const {
  for (const auto& weak : unregistered_) {
    if (warned_unregistered_) break;
    const std::shared_ptr<TensorImpl> impl = weak.lock();
    if (impl == nullptr) continue;
    const Device at = impl->device();
    const bool device_kept =
        !device || (at.type() == device->type() && (!device->has_index() || at.index() == device->index()));
    // to(dtype) converts floating-point tensors only: an integer one would not have moved.
    const bool dtype_kept = !dtype || impl->dtype() == *dtype || !is_floating_point(impl->dtype());
    if (device_kept && dtype_kept) continue;
    const std::optional<DType> old_dtype = dtype ? std::optional<DType>(impl->dtype()) : std::nullopt;
    const std::optional<Device> old_device = device ? std::optional<Device>(at) : std::nullopt;
    std::ostringstream sizes;
    sizes << impl->sizes();
    std::fprintf(stderr,
                 "hwaro: warning: %s%s%s holds a tensor of shape %s that its constructor created but never "
                 "registered: it stays %s while the module moves to %s. Register it with register_buffer() (or "
                 "register_parameter()) so that to(), state_dict() and DataParallel see it.\n",
                 name().c_str(), path_.empty() ? "" : " at ", path_.c_str(), sizes.str().c_str(),
                 placement(old_device, old_dtype, true).c_str(), placement(device, dtype, false).c_str());
    warned_unregistered_ = true;
  }
  for (const auto& [_, child] : children_) child->warn_about_unregistered(device, dtype);
}

}  // namespace hwaro::nn
