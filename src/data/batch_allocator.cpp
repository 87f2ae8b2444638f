// BatchAllocator: output tensors for collation, pinned ones from a reusable pool.
#include <mutex>
#include <vector>

#include "core/tensor_impl.h"
#include "hwaro/data/dataloader.h"
#include "hwaro/ops.h"

namespace hwaro::data {

// Buffers handed out before. The pool's own tensors are never handed out: each caller gets a new
// tensor over a buffer's storage, so that nothing a batch was given (requires_grad, a .grad) is
// seen by a later batch in the same buffer. A buffer is free again when the pool's tensor is the
// only holder of its storage (no batch or view refers to it) and no non_blocking copy from it may
// still be reading it (the pinned allocator's event for that copy has completed).
struct BatchAllocator::Pool {
  static constexpr std::size_t kMaxBuffers = 64;
  std::mutex mutex;
  std::vector<Tensor> buffers;
};

BatchAllocator::BatchAllocator(bool pin_memory) : pin_memory_(pin_memory), pool_(std::make_unique<Pool>()) {}
BatchAllocator::~BatchAllocator() = default;

namespace {
bool reusable(const Tensor& t) {
  const auto& storage = t.impl()->storage();
  return storage.use_count() == 1 && !storage->copies_pending();
}
// A new tensor, with no autograd state, over the pooled tensor's storage.
Tensor fresh_handle(const Tensor& pooled) {
  return Tensor(std::make_shared<TensorImpl>(pooled.impl()->storage(), pooled.dtype(), pooled.sizes()));
}
bool same_shape(const Tensor& t, IntArrayRef sizes, DType dtype) {
  return t.dtype() == dtype && t.sizes() == sizes;
}
}  // namespace

Tensor BatchAllocator::empty(IntArrayRef sizes, DType dtype) {
  if (!pin_memory_) return hwaro::empty(sizes, {.dtype = dtype});
  std::lock_guard<std::mutex> lock(pool_->mutex);
  for (const Tensor& t : pool_->buffers) {
    if (same_shape(t, sizes, dtype) && reusable(t)) return fresh_handle(t);
  }
  Tensor fresh = hwaro::empty(sizes, {.dtype = dtype, .pin_memory = true});
  if (pool_->buffers.size() == Pool::kMaxBuffers) return fresh;
  pool_->buffers.push_back(fresh);
  return fresh_handle(fresh);
}

std::size_t BatchAllocator::pooled_buffers() const {
  std::lock_guard<std::mutex> lock(pool_->mutex);
  return pool_->buffers.size();
}

}  // namespace hwaro::data
