#pragma once
// Page-locked host memory for pin_memory(): core's HostBlockCache (size classes, reuse
// after the streams that copied a block have passed that copy) over cudaHostAlloc and CUDA
// events. The backend's copies call record_stream for their host side.
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
  // A use of the block containing ptr (ignored for pageable memory) on `stream` of `device`.
  void record_stream(const void* ptr, int device, cudaStream_t stream);
  void empty_cache() { cache_->empty_cache(); }

 private:
  class Backing;
  class Events;
  std::unique_ptr<Backing> backing_;
  std::unique_ptr<Events> events_;
  std::unique_ptr<HostBlockCache> cache_;
};

}  // namespace hwaro::cuda
