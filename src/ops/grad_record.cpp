#include "ops/grad_record.h"

#include <atomic>

#include "core/backend_registry.h"
#include "hwaro/autograd.h"
#include "hwaro/errors.h"

namespace hwaro::ops {

namespace {
std::atomic<GradRecorder> recorder{nullptr};

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}
}  // namespace

void set_grad_recorder(GradRecorder r) { recorder.store(r); }

GradScope::GradScope(std::initializer_list<const Tensor*> inputs) {
  if (is_grad_enabled() && any_requires_grad(inputs)) enter();
}

GradScope::GradScope(const std::vector<Tensor>& inputs) {
  if (!is_grad_enabled()) return;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) {
      enter();
      return;
    }
  }
}

void GradScope::enter() {
  active_ = true;
  set_grad_enabled(false);
}

GradScope::~GradScope() {
  if (active_) set_grad_enabled(true);
}

const Tensor& GradScope::record(const Tensor& out, GradCall&& call) {
  if (!active_) return out;
  GradRecorder r = recorder.load();
  if (r == nullptr) {  // the start-up registration (core/backend_registry.h) installs it
    detail::find_backend(DeviceType::CPU);
    r = recorder.load();
  }
  HWARO_ASSERT(r != nullptr, "autograd's recorder is not installed");
  r(std::move(call), out);
  return out;
}

void check_inplace_grad(const char* op, const Tensor& self, const Tensor* other) {
  if (!is_grad_enabled()) return;
  if (self.requires_grad()) {
    HWARO_CHECK(!self.is_leaf(), "a leaf tensor that requires grad is being used in an in-place operation (", op,
                "); do the update inside a hw::NoGradGuard scope (as an optimiser does), or use the out-of-place form");
    HWARO_CHECK(false, op, ": in-place operations on a tensor that is part of the autograd graph are not supported; ",
                "use the out-of-place form of the op instead");
  }
  HWARO_CHECK(other == nullptr || !other->defined() || !other->requires_grad(), op,
              ": writing a tensor that requires grad into one that does not, in place, would lose its gradient; ",
              "use the out-of-place form of the op instead");
}

}  // namespace hwaro::ops
