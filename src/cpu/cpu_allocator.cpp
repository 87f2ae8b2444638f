#include "cpu/cpu_allocator.h"

#include <cstdlib>
#include <limits>
#include <new>

#include "hwaro/errors.h"

namespace hwaro::cpu {
namespace {

constexpr std::size_t kAlignment = 64;
constexpr std::size_t kLargeRounding = std::size_t{64} << 10;  // large sizes round up to 64 KiB

std::size_t round_up(std::size_t n, std::size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Small blocks carry their size in the context pointer so the deleter knows whether they were cached.
void* context_for(std::size_t nbytes) { return reinterpret_cast<void*>(nbytes); }

void* aligned_malloc(std::size_t nbytes) {
  void* p = std::aligned_alloc(kAlignment, round_up(nbytes, kAlignment));
  HWARO_CHECK_AS(OutOfMemoryError, p != nullptr, "CPU out of memory: tried to allocate ", nbytes,
                 " bytes; free some tensors or use a smaller batch size");
  return p;
}

}  // namespace

CpuAllocator::~CpuAllocator() { empty_cache(); }

DataPtr CpuAllocator::allocate(std::size_t nbytes) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, cpu);
  if (nbytes < kCacheMinBytes) return DataPtr(aligned_malloc(nbytes), context_for(0), &CpuAllocator::release, cpu);
  // Above this the rounding would wrap to a tiny size, which malloc would grant.
  HWARO_CHECK_AS(OutOfMemoryError, nbytes <= std::numeric_limits<std::size_t>::max() - kLargeRounding,
                 "CPU out of memory: tried to allocate ", nbytes, " bytes, more than any machine has");
  const std::size_t rounded = round_up(nbytes, kLargeRounding);
  {
    std::lock_guard lock(mutex_);
    // Take the smallest cached block that fits, unless it would waste more than an eighth.
    auto it = free_blocks_.lower_bound(rounded);
    if (it != free_blocks_.end() && it->first <= rounded + rounded / 8) {
      const std::size_t size = it->first;
      void* block = it->second;
      free_blocks_.erase(it);
      stats_.cached_bytes -= size;
      ++stats_.hits;
      return DataPtr(block, context_for(size), &CpuAllocator::release, cpu);
    }
    ++stats_.misses;
  }
  return DataPtr(aligned_malloc(rounded), context_for(rounded), &CpuAllocator::release, cpu);
}

void CpuAllocator::release(void* context, void* data) {
  const auto cached_size = reinterpret_cast<std::size_t>(context);
  if (cached_size == 0) {
    std::free(data);
  } else {
    cpu_allocator().give_back(data, cached_size);
  }
}

void CpuAllocator::give_back(void* data, std::size_t nbytes) {
  {
    std::lock_guard lock(mutex_);
    if (stats_.cached_bytes + nbytes <= kCacheMaxBytes) {
      free_blocks_.emplace(nbytes, data);
      stats_.cached_bytes += nbytes;
      return;
    }
  }
  std::free(data);
}

void CpuAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  for (auto& [size, block] : free_blocks_) std::free(block);
  free_blocks_.clear();
  stats_.cached_bytes = 0;
}

CpuCacheStats CpuAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

CpuAllocator& cpu_allocator() {
  static CpuAllocator* instance = new CpuAllocator();  // outlives tensors freed by static destructors
  return *instance;
}

}  // namespace hwaro::cpu
