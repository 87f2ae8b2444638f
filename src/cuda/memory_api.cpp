// hw::cuda's VRAM functions (Dev Tip 2): the statistics and controls of each device's
// caching allocator. Without a usable GPU they report zeros and change nothing.
#include <string>

#include "core/backend_registry.h"
#include "cuda/caching_device_allocator.h"
#include "hwaro/cuda.h"

namespace hwaro::cuda {
namespace {

// The cache of `device` (-1: current); nullptr without a GPU or in HWARO_CUDA_ALLOC=native mode.
BlockCache* cache_of(int device) {
  if (!is_available()) return nullptr;
  int index = 0;
  Backend& backend = hwaro::detail::backend_for(Device(DeviceType::CUDA, device), &index);
  return static_cast<CachingDeviceAllocator&>(backend.allocator(index)).cache();
}

template <typename F> std::size_t stat_of(int device, F pick) {
  BlockCache* cache = cache_of(device);
  return cache == nullptr ? 0 : static_cast<std::size_t>(pick(cache->stats()));
}

}  // namespace

void empty_cache() {
  for (int i = 0; i < device_count(); ++i) {
    if (BlockCache* cache = cache_of(i)) cache->empty_cache();
  }
}

std::size_t memory_allocated(int device) {
  return stat_of(device, [](const BlockCacheStats& s) { return s.allocated_bytes.current; });
}
std::size_t memory_reserved(int device) {
  return stat_of(device, [](const BlockCacheStats& s) { return s.reserved_bytes.current; });
}
std::size_t max_memory_allocated(int device) {
  return stat_of(device, [](const BlockCacheStats& s) { return s.allocated_bytes.peak; });
}
std::size_t max_memory_reserved(int device) {
  return stat_of(device, [](const BlockCacheStats& s) { return s.reserved_bytes.peak; });
}

void reset_peak_memory_stats(int device) {
  if (BlockCache* cache = cache_of(device)) cache->reset_peak_stats();
}

std::string memory_summary(int device) {
  if (!is_available()) return "no CUDA memory to summarise: " + unavailable_reason() + "\n";
  if (BlockCache* cache = cache_of(device)) return cache->memory_summary();
  return "HWARO_CUDA_ALLOC=native: the caching allocator is off, so there are no statistics\n";
}

}  // namespace hwaro::cuda
