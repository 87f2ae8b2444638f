#include "core/block_cache.h"

#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hwaro/errors.h"

namespace hwaro {
namespace {

// Requests above this would overflow the rounding; they can never be satisfied anyway.
constexpr std::size_t kMaxRequest = std::numeric_limits<std::size_t>::max() - BlockCache::kLargeBuffer;

std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

std::string format_bytes(std::int64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    out << bytes << " B";
  } else if (bytes < (std::int64_t{1} << 20)) {
    out << b / 1024.0 << " KiB";
  } else if (bytes < (std::int64_t{1} << 30)) {
    out << b / (1024.0 * 1024.0) << " MiB";
  } else {
    out << b / (1024.0 * 1024.0 * 1024.0) << " GiB";
  }
  return out.str();
}

std::int64_t as_signed(std::size_t n) { return static_cast<std::int64_t>(n); }

// A request's size, which may pass INT64_MAX (a rounded 2^63 - 1 byte request is 2^63), where
// as_signed would print it negative.
std::string format_request(std::size_t bytes) {
  if (bytes <= static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) return format_bytes(as_signed(bytes));
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return out.str();
}

}  // namespace

std::size_t BlockCache::round_size(std::size_t nbytes) {
  return nbytes < kMinBlockSize ? kMinBlockSize : round_up(nbytes, kMinBlockSize);
}

std::size_t BlockCache::segment_size(std::size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return round_up(rounded, kRoundLarge);
}

// Pools are ordered by stream first, so a lookup keyed (stream, size, nullptr) finds the
// smallest block of that stream that fits; the address breaks ties deterministically.
bool BlockCache::BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return std::less<const char*>()(a->ptr, b->ptr);
}

BlockCache::BlockCache(std::string device_name, BackingAllocator& backing, StreamSync& sync)
    : device_name_(std::move(device_name)), backing_(backing), sync_(sync) {}

BlockCache::~BlockCache() {
  std::unordered_set<Block*> heads;
  auto note_head = [&heads](Block* b) {
    while (b->prev != nullptr) b = b->prev;
    heads.insert(b);
  };
  for (Block* b : small_pool_) note_head(b);
  for (Block* b : large_pool_) note_head(b);
  for (const auto& entry : allocated_) note_head(entry.second);
  for (const PendingEvent& p : pending_) {
    note_head(p.block);
    sync_.release(p.event);
  }
  for (Block* head : heads) {
    void* segment = head->ptr;
    for (Block* b = head; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    backing_.raw_free(segment);
  }
}

void* BlockCache::allocate(std::size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  process_events();
  if (nbytes > kMaxRequest) throw_out_of_memory(nbytes, nbytes, nbytes);

  const std::size_t size = round_size(nbytes);
  const bool small = size <= kSmallSize;
  Pool& pool = pool_of(small);
  Block* block = take_free_block(pool, stream, size);
  if (block == nullptr) block = new_segment(segment_size(size), stream, small);
  if (block == nullptr) {
    // Frees waiting on other streams may complete a block that fits; failing that,
    // segments nobody uses go back so the backing allocator has room for one more try.
    synchronize_and_free_events();
    block = take_free_block(pool, stream, size);
    if (block == nullptr) {
      release_cached_segments();
      ++stats_.num_alloc_retries;
      block = new_segment(segment_size(size), stream, small);
    }
  }
  if (block == nullptr) throw_out_of_memory(nbytes, size, segment_size(size));

  const std::size_t remaining = block->size - size;
  if (small ? remaining >= kMinBlockSize : remaining > kSmallSize) split(block, size);
  block->allocated = true;
  allocated_.emplace(block->ptr, block);
  stats_.allocated_bytes.add(as_signed(block->size));
  stats_.active_blocks.add(1);
  stats_.active_bytes.add(as_signed(block->size));
  return block->ptr;
}

void BlockCache::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Block* block = find_allocated(ptr, "free");
  // The block's memory may still be read or written by work queued on the recorded streams: it
  // returns to its pool once each of them has passed this point. The events are recorded before
  // anything changes, so that a failure to record one (a GPU context broken by an earlier error)
  // leaves the block allocated, as it was, instead of half freed.
  std::vector<EventHandle> events;
  events.reserve(block->stream_uses.size());
  try {
    for (StreamId s : block->stream_uses) events.push_back(sync_.record(s));
  } catch (...) {
    for (EventHandle e : events) sync_.release(e);
    throw;
  }
  allocated_.erase(block->ptr);
  block->allocated = false;
  stats_.allocated_bytes.add(-as_signed(block->size));
  if (events.empty()) {
    return_to_pool(block);
    return;
  }
  for (EventHandle e : events) pending_.push_back(PendingEvent{e, block});
  block->pending_events += static_cast<int>(events.size());
  block->stream_uses.clear();
}

void BlockCache::record_stream(void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Memory this cache did not allocate (a from_blob tensor's) is not its to hold back: skipped,
  // as PyTorch's allocator skips it, so that backward's hand-over of such a gradient works.
  const auto it = allocated_.find(ptr);
  if (it == allocated_.end()) return;
  Block* block = it->second;
  // Work on the allocation stream is ordered before any reuse already.
  if (stream == block->stream) return;
  for (StreamId s : block->stream_uses) {
    if (s == stream) return;
  }
  block->stream_uses.push_back(stream);
}

void BlockCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  synchronize_and_free_events();
  release_cached_segments();
}

std::size_t BlockCache::block_size(void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_allocated(ptr, "block_size")->size;
}

BlockCacheStats BlockCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void BlockCache::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.allocated_bytes.reset_peak();
  stats_.reserved_bytes.reset_peak();
  stats_.active_blocks.reset_peak();
  stats_.active_bytes.reset_peak();
  stats_.segments.reset_peak();
}

BlockCache::Block* BlockCache::take_free_block(Pool& pool, StreamId stream, std::size_t size) {
  Block key(nullptr, size, stream, false);
  const auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

BlockCache::Block* BlockCache::new_segment(std::size_t size, StreamId stream, bool small) {
  void* memory = backing_.raw_alloc(size);
  if (memory == nullptr) return nullptr;
  stats_.reserved_bytes.add(as_signed(size));
  stats_.segments.add(1);
  return new Block(static_cast<char*>(memory), size, stream, small);
}

// Keeps the first `size` bytes in `block` and puts the rest back in the pool.
void BlockCache::split(Block* block, std::size_t size) {
  Block* rest = new Block(block->ptr + size, block->size - size, block->stream, block->small);
  rest->prev = block;
  rest->next = block->next;
  if (rest->next != nullptr) rest->next->prev = rest;
  block->next = rest;
  block->size = size;
  pool_of(block->small).insert(rest);
}

// Merges a block that nobody uses any more with its free neighbours and caches it.
void BlockCache::return_to_pool(Block* block) {
  const std::size_t size = block->size;
  Pool& pool = pool_of(block->small);
  auto is_cached = [](const Block* b) { return b != nullptr && !b->allocated && b->pending_events == 0; };
  if (Block* prev = block->prev; is_cached(prev)) {
    pool.erase(prev);
    block->ptr = prev->ptr;
    block->size += prev->size;
    block->prev = prev->prev;
    if (block->prev != nullptr) block->prev->next = block;
    delete prev;
  }
  if (Block* next = block->next; is_cached(next)) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (block->next != nullptr) block->next->prev = block;
    delete next;
  }
  pool.insert(block);
  stats_.active_blocks.add(-1);
  stats_.active_bytes.add(-as_signed(size));
}

void BlockCache::process_events() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!sync_.query(it->event)) {
      ++it;
      continue;
    }
    sync_.release(it->event);
    Block* block = it->block;
    it = pending_.erase(it);
    if (--block->pending_events == 0) return_to_pool(block);
  }
}

void BlockCache::synchronize_and_free_events() {
  while (!pending_.empty()) {
    const PendingEvent p = pending_.front();
    sync_.synchronize(p.event);  // a failure leaves the event pending, to be waited for again
    pending_.pop_front();
    sync_.release(p.event);
    if (--p.block->pending_events == 0) return_to_pool(p.block);
  }
}

// A cached block with no neighbours is a whole segment that nobody uses.
void BlockCache::release_cached_segments() {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (block->prev != nullptr || block->next != nullptr) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      backing_.raw_free(block->ptr);
      stats_.reserved_bytes.add(-as_signed(block->size));
      stats_.segments.add(-1);
      delete block;
    }
  }
}

BlockCache::Block* BlockCache::find_allocated(void* ptr, const char* what) const {
  const auto it = allocated_.find(ptr);
  HWARO_CHECK(it != allocated_.end(), what, ": pointer ", ptr, " was not allocated by the caching allocator of ",
              device_name_, ", or it was freed already");
  return it->second;
}

void BlockCache::throw_out_of_memory(std::size_t requested, std::size_t rounded, std::size_t segment) {
  ++stats_.num_ooms;
  const std::int64_t allocated = stats_.allocated_bytes.current;
  const std::int64_t reserved = stats_.reserved_bytes.current;
  throw OutOfMemoryError(detail::str_cat(
      "Out of memory on ", device_name_, ": tried to allocate ", format_request(rounded), " (", requested,
      " bytes requested; the device could not provide a segment of ", format_request(segment), "). ",
      format_bytes(allocated), " is allocated by tensors, ", format_bytes(reserved),
      " is reserved by the caching allocator, and ", format_bytes(reserved - allocated),
      " of it is free (reserved but not allocated). Use a smaller batch size, or call hw::cuda::empty_cache() "
      "to return cached memory that other code on this device needs."));
}

std::string BlockCache::memory_summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  const std::string rule(72, '-');
  auto row = [&out](const std::string& name, const std::string& current, const std::string& peak) {
    out << "| " << std::left << std::setw(36) << name << " | " << std::right << std::setw(14) << current << " | "
        << std::setw(14) << peak << " |\n";
  };
  auto bytes_row = [&](const std::string& name, const CacheStat& s) {
    row(name, format_bytes(s.current), format_bytes(s.peak));
  };
  auto count_row = [&](const std::string& name, const CacheStat& s) {
    row(name, std::to_string(s.current), std::to_string(s.peak));
  };
  auto pool_row = [&](const std::string& name, const Pool& pool) {
    std::int64_t bytes = 0;
    for (const Block* b : pool) bytes += as_signed(b->size);
    row(name, format_bytes(bytes), std::to_string(pool.size()));
  };

  out << '|' << std::string(72, '=') << "|\n";
  out << "| " << std::left << std::setw(70) << ("Caching allocator memory summary, " + device_name_) << " |\n";
  out << '|' << rule << "|\n";
  row("Metric", "Current", "Peak");
  out << '|' << rule << "|\n";
  bytes_row("Allocated memory", stats_.allocated_bytes);
  bytes_row("Active memory (incl. pending frees)", stats_.active_bytes);
  bytes_row("Reserved memory", stats_.reserved_bytes);
  row("Free memory (reserved - allocated)",
      format_bytes(stats_.reserved_bytes.current - stats_.allocated_bytes.current), "");
  count_row("Active blocks", stats_.active_blocks);
  count_row("Segments", stats_.segments);
  out << '|' << rule << "|\n";
  row("Cache", "Bytes", "Blocks");
  out << '|' << rule << "|\n";
  pool_row("Cached in the small pool", small_pool_);
  pool_row("Cached in the large pool", large_pool_);
  std::unordered_set<const Block*> waiting;
  std::int64_t waiting_bytes = 0;
  for (const PendingEvent& p : pending_) {
    if (waiting.insert(p.block).second) waiting_bytes += as_signed(p.block->size);
  }
  row("Frees waiting for other streams", format_bytes(waiting_bytes), std::to_string(waiting.size()));
  row("Allocation retries", std::to_string(stats_.num_alloc_retries), "");
  row("Out-of-memory errors", std::to_string(stats_.num_ooms), "");
  out << '|' << std::string(72, '=') << "|\n";
  return out.str();
}

}  // namespace hwaro
