#pragma once
// The CUDA backend's allocator for one device: core's BlockCache (PyTorch's caching
// allocator's pools, splitting, stream-ordered reuse) over cudaMalloc/cudaFree and CUDA
// events. HWARO_CUDA_ALLOC=native bypasses the cache.
#include <memory>

#include "core/allocator.h"
#include "core/block_cache.h"

namespace hwaro::cuda {

class CachingDeviceAllocator final : public Allocator {
 public:
  explicit CachingDeviceAllocator(int device);
  ~CachingDeviceAllocator() override;

  // Memory for use on the device's current stream.
  DataPtr allocate(std::size_t nbytes) override;

  // nullptr in native mode.
  BlockCache* cache() { return cache_.get(); }
  int device() const { return device_; }

 private:
  class CudaBacking;
  class CudaEvents;

  // The deleter of cached blocks (a DataPtr's, so it must not throw).
  static void free_cached(void* cache, void* data) noexcept;

  int device_;
  bool native_;
  std::unique_ptr<CudaBacking> backing_;
  std::unique_ptr<CudaEvents> events_;
  std::unique_ptr<BlockCache> cache_;
};

// True when HWARO_CUDA_ALLOC=native.
bool native_allocation_requested();

}  // namespace hwaro::cuda
