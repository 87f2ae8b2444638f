#pragma once
// HostBlockCache: the device-independent half of a caching pinned host allocator, in the
// manner of PyTorch's CachingHostAllocator. Memory comes from a BackingAllocator
// (cudaHostAlloc in the CUDA backend, a fake in the tests), stream ordering from HostEvents.
//
// - Requests are rounded up to a power of two, at least 512 bytes (the size class); a free
//   block is reused for any request of its class. Blocks are never split.
// - record_event(ptr, device, stream) is called right after an asynchronous copy from or into
//   the live block containing ptr was queued on `stream`: it records an event there (PyTorch's
//   record_event). A freed block is reused only once all its events have completed, and
//   copies_pending() lets an owner that keeps a block (a pool of batch buffers) ask the same.
// - Events of one stream complete in order, so a block keeps only the newest per stream.
// - When the backing allocator fails, the free blocks are released and the allocation is
//   retried once; a second failure throws OutOfMemoryError.
// All members are thread-safe (one mutex).
#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "core/block_cache.h"

namespace hwaro {

// Events on the streams of any device. record() may fail by returning 0; the cache then
// waits with synchronize_stream() instead.
class HostEvents {
 public:
  virtual ~HostEvents() = default;
  virtual EventHandle record(int device, StreamId stream) = 0;
  virtual bool query(EventHandle event) = 0;
  virtual void release(EventHandle event) = 0;
  virtual void synchronize_stream(int device, StreamId stream) = 0;
};

class HostBlockCache {
 public:
  HostBlockCache(BackingAllocator& backing, HostEvents& events) : backing_(backing), events_(events) {}
  // Releases every block and pending event (the owner outlives every tensor using them).
  ~HostBlockCache();
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  void* allocate(std::size_t nbytes);  // nullptr for 0 bytes
  void free(void* ptr) noexcept;       // nullptr is ignored
  // A copy from or into the block containing ptr was just queued on `stream` of `device`.
  // Pointers outside this cache's live blocks (pageable memory) are ignored.
  void record_event(const void* ptr, int device, StreamId stream);
  // Whether a copy recorded on the live block containing ptr may still be running (false for
  // pointers outside the cache). Completed events are released on the way.
  bool copies_pending(const void* ptr);
  void empty_cache();  // frees the blocks that are free now

  bool contains(const void* ptr) const;
  std::size_t cached_bytes() const;  // in free blocks
  std::size_t live_bytes() const;    // handed out or awaiting events
  static std::size_t size_class(std::size_t nbytes);

 private:
  struct PendingCopy {
    int device;
    StreamId stream;
    EventHandle event;
  };
  struct Block {
    std::size_t size = 0;
    bool in_use = false;
    std::vector<PendingCopy> copies;  // the newest recorded copy per stream, not yet seen complete
  };
  char* live_base_locked(const void* ptr) const;  // the live block containing ptr, or nullptr
  bool settle_locked(Block& block);  // releases completed events; true when none is left
  void process_freed_locked();
  void release_free_locked();

  BackingAllocator& backing_;
  HostEvents& events_;
  mutable std::mutex mutex_;
  std::map<char*, Block> blocks_;           // every block, by base address
  std::multimap<std::size_t, char*> free_;  // size class -> free block
};

}  // namespace hwaro
