#include "core/host_block_cache.h"

#include <bit>

#include "hwaro/errors.h"

namespace hwaro {

std::size_t HostBlockCache::size_class(std::size_t nbytes) {
  return std::bit_ceil(nbytes < 512 ? std::size_t{512} : nbytes);
}

HostBlockCache::~HostBlockCache() {
  for (auto& [ptr, block] : blocks_) {
    for (EventHandle e : block.events) events_.release(e);
    backing_.raw_free(ptr);
  }
}

void* HostBlockCache::allocate(std::size_t nbytes) {
  if (nbytes == 0) return nullptr;
  const std::size_t size = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
  char* ptr = nullptr;
  if (auto it = free_.find(size); it != free_.end()) {
    ptr = it->second;
    free_.erase(it);
  } else {
    void* p = backing_.raw_alloc(size);
    if (p == nullptr) {  // give the cached blocks back and try once more
      release_free_locked();
      p = backing_.raw_alloc(size);
    }
    HWARO_CHECK_AS(OutOfMemoryError, p != nullptr, "pinned host memory: allocating ", size, " bytes (for a request of ",
                   nbytes, ") failed even after the cache was freed (", blocks_.size(), " pinned blocks in use); ",
                   "pin smaller tensors or fewer at once, or use pageable memory");
    ptr = static_cast<char*>(p);
    blocks_[ptr].size = size;
  }
  blocks_.at(ptr).in_use = true;
  return ptr;
}

const HostBlockCache::Block* HostBlockCache::find_live(const void* ptr, char** base) const {
  const auto* p = static_cast<const char*>(ptr);
  auto it = blocks_.upper_bound(const_cast<char*>(p));
  if (it == blocks_.begin()) return nullptr;
  --it;
  if (!it->second.in_use || p >= it->first + it->second.size) return nullptr;
  *base = it->first;
  return &it->second;
}

void HostBlockCache::record_stream(const void* ptr, int device, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  char* base = nullptr;
  if (find_live(ptr, &base) == nullptr) return;
  Block& block = blocks_.at(base);
  for (const auto& use : block.uses) {
    if (use.first == device && use.second == stream) return;
  }
  block.uses.emplace_back(device, stream);
}

bool HostBlockCache::contains(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  char* base = nullptr;
  return find_live(ptr, &base) != nullptr;
}

void HostBlockCache::free(void* ptr) noexcept {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(static_cast<char*>(ptr));
  if (it == blocks_.end() || !it->second.in_use) return;  // not ours: nothing safe to do
  Block& block = it->second;
  block.in_use = false;
  for (const auto& [device, stream] : block.uses) {
    const EventHandle event = events_.record(device, stream);
    if (event != 0) {
      block.events.push_back(event);
    } else {
      events_.synchronize_stream(device, stream);
    }
  }
  block.uses.clear();
  if (block.events.empty()) free_.emplace(block.size, it->first);
}

void HostBlockCache::process_events_locked() {
  for (auto& [ptr, block] : blocks_) {
    if (block.in_use || block.events.empty()) continue;
    std::vector<EventHandle> pending;
    for (EventHandle e : block.events) {
      if (events_.query(e)) {
        events_.release(e);
      } else {
        pending.push_back(e);
      }
    }
    block.events = std::move(pending);
    if (block.events.empty()) free_.emplace(block.size, ptr);
  }
}

void HostBlockCache::release_free_locked() {
  for (const auto& [size, ptr] : free_) {
    backing_.raw_free(ptr);
    blocks_.erase(ptr);
  }
  free_.clear();
}

void HostBlockCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
  release_free_locked();
}

std::size_t HostBlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& entry : free_) total += entry.first;
  return total;
}

std::size_t HostBlockCache::live_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& [ptr, block] : blocks_) total += block.size;
  for (const auto& entry : free_) total -= entry.first;
  return total;
}

}  // namespace hwaro
