#pragma once
// Page-locked host memory for pin_memory(): core's HostBlockCache (size classes, reuse
// once the copies queued from or into a block have finished) over cudaHostAlloc and CUDA
// events. The backend's copies call record_event for their host side.
#include <cuda_runtime_api.h>

#include <memory>

#include "core/allocator.h"
#include "core/host_block_cache.h"

namespace hwaro::cuda {

class PinnedHostAllocator final : public Allocator {
 public:
  PinnedHostAllocator();
  ~PinnedHostAllocator() override;

  DataPtr allocate(std::size_t nbytes) override;
  bool is_pinned() const override { return true; }
  bool copies_pending(const void* ptr) override { return cache_->copies_pending(ptr); }
  // A copy from or into the block containing ptr (ignored for pageable memory) was just
  // queued on `stream` of `device`.
  void record_event(const void* ptr, int device, cudaStream_t stream);
  void empty_cache() { cache_->empty_cache(); }

 private:
  class Backing;
  class Events;
  std::unique_ptr<Backing> backing_;
  std::unique_ptr<Events> events_;
  std::unique_ptr<HostBlockCache> cache_;
};

}  // namespace hwaro::cuda
