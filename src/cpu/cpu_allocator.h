#pragma once
// The CPU allocator: 64-byte aligned memory (a cache line, and AVX-512's vector).
// Large blocks are cached and reused: a fresh multi-megabyte allocation from the
// OS costs a page fault per 4 KiB on first touch, which halves the speed of
// c = a + b on large tensors. Small blocks go straight to malloc, which is fast.
#include <cstddef>
#include <map>
#include <mutex>

#include "core/allocator.h"

namespace hwaro::cpu {

struct CpuCacheStats {
  std::size_t cached_bytes = 0;  // held for reuse, not in use
  std::size_t hits = 0;
  std::size_t misses = 0;
};

class CpuAllocator final : public Allocator {
 public:
  // Blocks of at least this size are cached.
  static constexpr std::size_t kCacheMinBytes = std::size_t{1} << 20;
  // At most this much is kept cached; beyond it freed blocks go back to the OS.
  static constexpr std::size_t kCacheMaxBytes = std::size_t{2} << 30;

  ~CpuAllocator() override;
  DataPtr allocate(std::size_t nbytes) override;

  // Returns every cached block to the OS.
  void empty_cache();
  CpuCacheStats stats() const;

 private:
  static void release(void* context, void* data);
  void give_back(void* data, std::size_t nbytes);

  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_blocks_;  // rounded size -> block
  CpuCacheStats stats_;
};

// The process-wide CPU allocator.
CpuAllocator& cpu_allocator();

}  // namespace hwaro::cpu
