#pragma once
// BlockCache: the device-independent half of a caching device allocator, in the
// manner of PyTorch's CUDACachingAllocator. It knows nothing about CUDA: memory
// comes from a BackingAllocator (cudaMalloc/cudaFree in the CUDA backend, a fake in
// the tests) and stream ordering from a StreamSync (CUDA events).
//
// - Request sizes are rounded up to a multiple of 512 bytes.
// - Requests of at most 1 MiB come from the small pool, carved out of 2 MiB
//   segments; larger ones from the large pool, whose segments are 20 MiB for
//   requests under 10 MiB and the request rounded up to 2 MiB otherwise.
// - A request takes the smallest cached block that fits (best fit) among the
//   blocks of its stream; a block is only ever reused on the stream it was
//   allocated on, because work queued on that stream is ordered after its last use.
// - A block larger than the request is split when the remainder is worth keeping
//   (small pool: at least 512 bytes; large pool: more than 1 MiB); freed neighbours
//   within a segment merge again.
// - record_stream(ptr, s) marks a use on another stream: free() then records an
//   event on each such stream and the block returns to its pool only when every
//   event has completed.
// - When the backing allocator fails, all fully free cached segments are released
//   and the allocation is retried once; a second failure throws OutOfMemoryError.
//
// One BlockCache serves one device; all members are thread-safe (one mutex).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/block_cache_stats.h"

namespace hwaro {

// An opaque stream id (a cudaStream_t cast to an integer in the CUDA backend).
using StreamId = std::uintptr_t;
// An opaque event (a cudaEvent_t cast to an integer in the CUDA backend).
using EventHandle = std::uintptr_t;

// Where segments come from. raw_alloc returns nullptr when the device has no memory left.
class BackingAllocator {
 public:
  virtual ~BackingAllocator() = default;
  virtual void* raw_alloc(std::size_t nbytes) = 0;
  virtual void raw_free(void* ptr) = 0;
};

// Stream ordering. record() marks the current end of a stream's queued work; query()
// says whether the stream has passed that mark; synchronize() waits for it (used only
// before memory goes back to the backing allocator); release() frees the event.
class StreamSync {
 public:
  virtual ~StreamSync() = default;
  virtual EventHandle record(StreamId stream) = 0;
  virtual bool query(EventHandle event) = 0;
  virtual void synchronize(EventHandle event) = 0;
  virtual void release(EventHandle event) = 0;
};

class BlockCache {
 public:
  static constexpr std::size_t kMinBlockSize = 512;              // rounding unit and smallest block
  static constexpr std::size_t kSmallSize = 1u << 20;            // largest small-pool request
  static constexpr std::size_t kSmallBuffer = 2u << 20;          // small-pool segment size
  static constexpr std::size_t kLargeBuffer = 20u << 20;         // segment for large requests < kMinLargeAlloc
  static constexpr std::size_t kMinLargeAlloc = 10u << 20;       // from here segments fit the request
  static constexpr std::size_t kRoundLarge = 2u << 20;           // large segments are multiples of this

  // device_name (e.g. "cuda:0 (NVIDIA H200)") appears in error messages and the summary.
  // The backing allocator and the stream sync must outlive the cache.
  BlockCache(std::string device_name, BackingAllocator& backing, StreamSync& sync);
  // Returns every segment to the backing allocator (live blocks included) and releases
  // pending events.
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A block of at least nbytes for use on `stream`; nullptr for 0 bytes. Throws
  // OutOfMemoryError when the backing allocator fails even after the cache was flushed.
  void* allocate(std::size_t nbytes, StreamId stream);
  // Returns a block from allocate() to the cache; nullptr is ignored.
  void free(void* ptr);
  // Notes that the block at ptr is used on `stream` too: its reuse will wait for it. A pointer
  // this cache did not allocate is ignored (its owner orders its reuse).
  void record_stream(void* ptr, StreamId stream);
  // Waits for pending frees and returns every fully free segment to the backing allocator.
  void empty_cache();

  // The size of the live block at ptr: the rounded request, or up to 1 MiB more for a
  // large block whose remainder was not worth splitting off.
  std::size_t block_size(void* ptr) const;

  BlockCacheStats stats() const;
  void reset_peak_stats();
  // A readable table of the statistics and of what the pools hold.
  std::string memory_summary() const;

  // The size a request of nbytes occupies, and the segment a cache miss for it allocates.
  static std::size_t round_size(std::size_t nbytes);
  static std::size_t segment_size(std::size_t rounded);

 private:
  struct Block {
    Block(char* p, std::size_t n, StreamId s, bool in_small_pool) : ptr(p), size(n), stream(s), small(in_small_pool) {}
    char* ptr;
    std::size_t size;
    StreamId stream;
    bool small;                       // which pool
    bool allocated = false;           // handed out (false while free or pending)
    int pending_events = 0;           // events to pass before it returns to its pool
    Block* prev = nullptr;            // neighbours within the segment
    Block* next = nullptr;
    std::vector<StreamId> stream_uses;  // other streams recorded by record_stream
  };
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockOrder>;
  struct PendingEvent {
    EventHandle event;
    Block* block;
  };

  Pool& pool_of(bool small) { return small ? small_pool_ : large_pool_; }
  Block* take_free_block(Pool& pool, StreamId stream, std::size_t size);
  Block* new_segment(std::size_t size, StreamId stream, bool small);
  void split(Block* block, std::size_t size);
  void return_to_pool(Block* block);
  void process_events();
  void synchronize_and_free_events();
  void release_cached_segments();
  Block* find_allocated(void* ptr, const char* what) const;
  [[noreturn]] void throw_out_of_memory(std::size_t requested, std::size_t rounded, std::size_t segment);

  const std::string device_name_;
  BackingAllocator& backing_;
  StreamSync& sync_;

  mutable std::mutex mutex_;
  Pool small_pool_;
  Pool large_pool_;
  std::unordered_map<void*, Block*> allocated_;
  std::deque<PendingEvent> pending_;
  BlockCacheStats stats_;
};

}  // namespace hwaro
