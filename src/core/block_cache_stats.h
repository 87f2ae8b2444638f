#pragma once
// The statistics a BlockCache keeps (PyTorch's torch.cuda.memory_stats() in small):
// each Stat has a current value and the peak since construction or the last
// reset_peak_stats().
#include <algorithm>
#include <cstdint>

namespace hwaro {

struct CacheStat {
  std::int64_t current = 0;
  std::int64_t peak = 0;

  void add(std::int64_t delta) {
    current += delta;
    peak = std::max(peak, current);
  }
  void reset_peak() { peak = current; }
};

struct BlockCacheStats {
  // Bytes handed out to callers (rounded sizes); a freed block stops counting at once,
  // even when its reuse still waits for other streams.
  CacheStat allocated_bytes;
  // Bytes obtained from the backing allocator (whole segments).
  CacheStat reserved_bytes;
  // Blocks and bytes allocated or freed but still waiting for recorded streams.
  CacheStat active_blocks;
  CacheStat active_bytes;
  // Segments obtained from the backing allocator.
  CacheStat segments;
  // Backing allocations retried after the cache was flushed, and requests that then failed.
  std::int64_t num_alloc_retries = 0;
  std::int64_t num_ooms = 0;
};

}  // namespace hwaro
