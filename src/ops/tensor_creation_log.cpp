#include "ops/tensor_creation_log.h"

namespace hwaro::ops {
namespace {
thread_local TensorCreationLog* innermost = nullptr;
}  // namespace

TensorCreationLog::TensorCreationLog() : outer_(innermost) { innermost = this; }

TensorCreationLog::~TensorCreationLog() { innermost = outer_; }

void TensorCreationLog::note(const Tensor& t) {
  if (innermost != nullptr) innermost->created_.push_back(t.impl_ptr());
}

}  // namespace hwaro::ops
