#pragma once
// Page-locked host memory for pin_memory() (cudaHostAlloc), cached like PyTorch's
// CachingHostAllocator: blocks are rounded up to a power of two (at least 512 bytes) and a
// freed block is reused for any request of its size class, but only once every stream that
// copied from or to it (record_stream, done by the backend's copies) has passed that use:
// a non_blocking copy may still be reading the block when its tensor is freed.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/allocator.h"

namespace hwaro::cuda {

class PinnedHostAllocator final : public Allocator {
 public:
  PinnedHostAllocator() = default;
  ~PinnedHostAllocator() override;
  PinnedHostAllocator(const PinnedHostAllocator&) = delete;
  PinnedHostAllocator& operator=(const PinnedHostAllocator&) = delete;

  DataPtr allocate(std::size_t nbytes) override;
  bool is_pinned() const override { return true; }

  // Notes a use of the live block containing ptr on `stream` of `device`. Pointers that
  // are not in a block of this allocator (pageable memory) are ignored.
  void record_stream(const void* ptr, int device, cudaStream_t stream);
  // Returns every free block to the driver (blocks still in use or awaiting events stay).
  void empty_cache();

  std::size_t cached_bytes() const;  // in free blocks, ready for reuse
  std::size_t live_bytes() const;    // in blocks handed out or awaiting events

  static std::size_t size_class(std::size_t nbytes);

 private:
  struct Block {
    std::size_t size = 0;
    bool in_use = false;
    std::vector<std::pair<int, cudaStream_t>> uses;  // other streams that touched it
    std::vector<cudaEvent_t> events;                 // pending after free
  };

  void free(void* ptr);
  void process_events_locked();  // moves blocks whose events have completed to the free lists
  void release_free_locked();

  mutable std::mutex mutex_;
  std::map<char*, Block> blocks_;                    // every block, by base address
  std::multimap<std::size_t, char*> free_;           // size class -> free block
};

}  // namespace hwaro::cuda
