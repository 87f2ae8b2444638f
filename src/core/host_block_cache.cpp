#include "core/host_block_cache.h"

#include <bit>
#include <limits>

#include "hwaro/errors.h"

namespace hwaro {

std::size_t HostBlockCache::size_class(std::size_t nbytes) {
  return std::bit_ceil(nbytes < 512 ? std::size_t{512} : nbytes);
}

HostBlockCache::~HostBlockCache() {
  for (auto& [ptr, block] : blocks_) {
    for (const PendingCopy& copy : block.copies) events_.release(copy.event);
    backing_.raw_free(ptr);
  }
}

void* HostBlockCache::allocate(std::size_t nbytes) {
  if (nbytes == 0) return nullptr;
  // Above 2^63 no power of two holds the request (bit_ceil's result would not be representable).
  constexpr std::size_t kLargestClass = (std::numeric_limits<std::size_t>::max() >> 1) + 1;
  HWARO_CHECK_AS(OutOfMemoryError, nbytes <= kLargestClass, "pinned host memory: a request of ", nbytes,
                 " bytes is more than any machine has");
  const std::size_t size = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  process_freed_locked();
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

char* HostBlockCache::live_base_locked(const void* ptr) const {
  const auto* p = static_cast<const char*>(ptr);
  auto it = blocks_.upper_bound(const_cast<char*>(p));
  if (it == blocks_.begin()) return nullptr;
  --it;
  if (!it->second.in_use || p >= it->first + it->second.size) return nullptr;
  return it->first;
}

void HostBlockCache::record_event(const void* ptr, int device, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  char* base = live_base_locked(ptr);
  if (base == nullptr) return;
  std::vector<PendingCopy>& copies = blocks_.at(base).copies;
  const EventHandle event = events_.record(device, stream);
  if (event == 0) events_.synchronize_stream(device, stream);  // the copy is done once this returns
  for (auto it = copies.begin(); it != copies.end(); ++it) {
    if (it->device != device || it->stream != stream) continue;
    events_.release(it->event);  // the new event (or the wait) covers the older copy too
    copies.erase(it);
    break;
  }
  if (event != 0) copies.push_back({device, stream, event});
}

// Each finished copy leaves the list as its event is released, so that a query that throws part
// of the way (a broken GPU context) leaves no released event behind to be released again.
bool HostBlockCache::settle_locked(Block& block) {
  for (auto it = block.copies.begin(); it != block.copies.end();) {
    if (events_.query(it->event)) {
      events_.release(it->event);
      it = block.copies.erase(it);
    } else {
      ++it;
    }
  }
  return block.copies.empty();
}

bool HostBlockCache::copies_pending(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  char* base = live_base_locked(ptr);
  return base != nullptr && !settle_locked(blocks_.at(base));
}

bool HostBlockCache::contains(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_base_locked(ptr) != nullptr;
}

void HostBlockCache::free(void* ptr) noexcept {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(static_cast<char*>(ptr));
  if (it == blocks_.end() || !it->second.in_use) return;  // not ours: nothing safe to do
  it->second.in_use = false;
  // A block whose copies are still running waits outside the free list (process_freed_locked).
  if (it->second.copies.empty()) free_.emplace(it->second.size, it->first);
}

void HostBlockCache::process_freed_locked() {
  for (auto& [ptr, block] : blocks_) {
    if (block.in_use || block.copies.empty()) continue;
    if (settle_locked(block)) free_.emplace(block.size, ptr);
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
  process_freed_locked();
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
