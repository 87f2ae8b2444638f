// BlockCache (the device-independent caching allocator) against a fake backing
// allocator and fake stream events, so it is tested where no GPU is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/block_cache.h"
#include "support/test_support.h"

namespace hwaro {
namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * 1024;
constexpr StreamId kStream1 = 1;
constexpr StreamId kStream2 = 2;
constexpr StreamId kStream3 = 3;

// Real (512-aligned) host memory, so blocks can be written to; counts calls, can be
// told to fail the next calls or to refuse beyond a capacity.
class FakeBacking final : public BackingAllocator {
 public:
  void* raw_alloc(std::size_t nbytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++alloc_calls_;
    requested_.push_back(nbytes);
    if (fail_next_ > 0 || live_bytes_ + nbytes > capacity_) {
      fail_next_ = std::max(0, fail_next_ - 1);
      ++failed_calls_;
      return nullptr;
    }
    void* p = std::aligned_alloc(BlockCache::kMinBlockSize, nbytes);
    if (p == nullptr) return nullptr;
    live_.emplace(static_cast<char*>(p), nbytes);
    live_bytes_ += nbytes;
    return p;
  }
  void raw_free(void* ptr) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++free_calls_;
    const auto it = live_.find(static_cast<char*>(ptr));
    ASSERT_NE(it, live_.end()) << "raw_free of a pointer raw_alloc did not return";
    live_bytes_ -= it->second;
    live_.erase(it);
    std::free(ptr);
  }

  void fail_next(int n) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_next_ = n;
  }
  void set_capacity(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = bytes;
  }
  int alloc_calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return alloc_calls_;
  }
  int free_calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return free_calls_;
  }
  int failed_calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failed_calls_;
  }
  std::vector<std::size_t> requested() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requested_;
  }
  std::size_t live_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_bytes_;
  }
  std::map<char*, std::size_t> live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }

 private:
  mutable std::mutex mutex_;
  int alloc_calls_ = 0;
  int free_calls_ = 0;
  int failed_calls_ = 0;
  int fail_next_ = 0;
  std::size_t capacity_ = std::numeric_limits<std::size_t>::max() / 2;
  std::size_t live_bytes_ = 0;
  std::vector<std::size_t> requested_;
  std::map<char*, std::size_t> live_;
};

// Events that complete only when the test says so (or when synchronize() waits for one).
class FakeSync final : public StreamSync {
 public:
  EventHandle record(StreamId stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_record_on_ == stream) throw Error("recording an event failed");
    const EventHandle e = next_++;
    events_.emplace(e, Event{stream, false});
    ++recorded_;
    return e;
  }
  bool query(EventHandle event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.at(event).done;
  }
  void synchronize(EventHandle event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_synchronize_) throw Error("synchronizing an event failed");
    events_.at(event).done = true;
    ++synchronized_;
  }
  void release(EventHandle event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_EQ(events_.erase(event), 1u) << "release of an unknown or released event";
  }

  void complete(StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [handle, e] : events_) {
      if (e.stream == stream) e.done = true;
    }
  }
  void fail_synchronize(bool fail) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_synchronize_ = fail;
  }
  // record() on `stream` throws from now on (0: never), as a broken GPU context's would.
  void fail_record_on(StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_record_on_ = stream;
  }
  int recorded() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_;
  }
  int synchronized() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return synchronized_;
  }
  std::size_t outstanding() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.size();
  }

 private:
  struct Event {
    StreamId stream;
    bool done;
  };
  mutable std::mutex mutex_;
  EventHandle next_ = 1;
  StreamId fail_record_on_ = 0;
  bool fail_synchronize_ = false;
  int recorded_ = 0;
  int synchronized_ = 0;
  std::map<EventHandle, Event> events_;
};

class BlockCacheTest : public ::testing::Test {
 protected:
  FakeBacking backing;
  FakeSync sync;
  BlockCache cache{"test:0", backing, sync};  // declared last: destroyed first

  std::int64_t allocated() const { return cache.stats().allocated_bytes.current; }
  std::int64_t reserved() const { return cache.stats().reserved_bytes.current; }
};

std::ptrdiff_t distance(void* a, void* b) { return static_cast<char*>(b) - static_cast<char*>(a); }

TEST(BlockCacheSizes, RoundingAndSegmentSizes) {
  EXPECT_EQ(BlockCache::round_size(1), 512u);
  EXPECT_EQ(BlockCache::round_size(512), 512u);
  EXPECT_EQ(BlockCache::round_size(513), 1024u);
  EXPECT_EQ(BlockCache::round_size(MiB), MiB);
  EXPECT_EQ(BlockCache::round_size(MiB + 1), MiB + 512);
  EXPECT_EQ(BlockCache::segment_size(512), 2 * MiB);
  EXPECT_EQ(BlockCache::segment_size(MiB), 2 * MiB);
  EXPECT_EQ(BlockCache::segment_size(MiB + 512), 20 * MiB);
  EXPECT_EQ(BlockCache::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(BlockCache::segment_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(BlockCache::segment_size(10 * MiB + 512), 12 * MiB);
  EXPECT_EQ(BlockCache::segment_size(21 * MiB), 22 * MiB);
}

TEST_F(BlockCacheTest, AllocationsAreRoundedTo512Bytes) {
  EXPECT_EQ(cache.allocate(0, kStream1), nullptr);
  EXPECT_EQ(backing.alloc_calls(), 0);
  void* a = cache.allocate(1, kStream1);
  void* b = cache.allocate(513, kStream1);
  void* c = cache.allocate(1, kStream1);
  EXPECT_EQ(cache.block_size(a), 512u);
  EXPECT_EQ(cache.block_size(b), 1024u);
  EXPECT_EQ(distance(a, b), 512);
  EXPECT_EQ(distance(b, c), 1024);
  EXPECT_EQ(allocated(), 2048);
  EXPECT_EQ(backing.requested(), std::vector<std::size_t>{2 * MiB});
  cache.free(nullptr);  // ignored, as free(nullptr)
  for (void* p : {a, b, c}) cache.free(p);
  EXPECT_EQ(allocated(), 0);
}

TEST_F(BlockCacheTest, SmallAndLargePoolsAreSeparate) {
  void* small = cache.allocate(512, kStream1);  // 2 MiB segment, ~2 MiB left in the small pool
  void* large = cache.allocate(MiB + 512, kStream1);  // would fit there, but is large
  EXPECT_EQ(backing.requested(), (std::vector<std::size_t>{2 * MiB, 20 * MiB}));
  void* small2 = cache.allocate(4 * KiB, kStream1);  // 18 MiB are free in the large pool
  EXPECT_EQ(backing.alloc_calls(), 2);
  EXPECT_EQ(distance(small, small2), 512);
  void* large2 = cache.allocate(2 * MiB, kStream1);
  EXPECT_EQ(backing.alloc_calls(), 2);
  EXPECT_EQ(distance(large, large2), static_cast<std::ptrdiff_t>(MiB + 512));
  EXPECT_EQ(reserved(), static_cast<std::int64_t>(22 * MiB));
  for (void* p : {small, large, small2, large2}) cache.free(p);
}

TEST_F(BlockCacheTest, FreedBlockIsReusedWithoutNewBackingAllocation) {
  void* p = cache.allocate(4000, kStream1);
  cache.free(p);
  void* q = cache.allocate(4096, kStream1);
  EXPECT_EQ(q, p);
  EXPECT_EQ(backing.alloc_calls(), 1);
  cache.free(q);
  void* big = cache.allocate(12 * MiB, kStream1);
  cache.free(big);
  EXPECT_EQ(cache.allocate(11 * MiB + 1, kStream1), big);  // same 12 MiB segment, unsplit
  EXPECT_EQ(backing.alloc_calls(), 2);
}

TEST_F(BlockCacheTest, BestFitPicksTheSmallestFreeBlock) {
  void* a = cache.allocate(8 * KiB, kStream1);
  void* x = cache.allocate(512, kStream1);
  void* b = cache.allocate(4 * KiB, kStream1);
  void* y = cache.allocate(512, kStream1);
  cache.free(a);
  cache.free(b);
  EXPECT_EQ(cache.allocate(4 * KiB, kStream1), b);
  EXPECT_EQ(cache.allocate(6 * KiB, kStream1), a);  // split: the 2 KiB rest stays cached
  EXPECT_EQ(cache.allocate(2 * KiB, kStream1), static_cast<char*>(a) + 6 * KiB);
  EXPECT_EQ(backing.alloc_calls(), 1);
  (void)x;
  (void)y;
}

TEST_F(BlockCacheTest, SplitThresholdsPerPool) {
  // Small pool: any remainder of at least 512 bytes is split off.
  void* s1 = cache.allocate(MiB, kStream1);
  void* s2 = cache.allocate(MiB, kStream1);
  EXPECT_EQ(distance(s1, s2), static_cast<std::ptrdiff_t>(MiB));
  EXPECT_EQ(backing.alloc_calls(), 1);
  // Large pool: a remainder of at most 1 MiB stays with the block.
  void* l1 = cache.allocate(19 * MiB, kStream1);  // 20 MiB segment, 1 MiB rest
  EXPECT_EQ(cache.block_size(l1), 20 * MiB);
  EXPECT_EQ(allocated(), static_cast<std::int64_t>(22 * MiB));
  void* l2 = cache.allocate(18 * MiB + 512, kStream1);  // 20 MiB segment, rest 2 MiB - 512: split
  EXPECT_EQ(cache.block_size(l2), 18 * MiB + 512);
  void* l3 = cache.allocate(MiB + 512, kStream1);  // takes that rest
  EXPECT_EQ(distance(l2, l3), static_cast<std::ptrdiff_t>(18 * MiB + 512));
  EXPECT_EQ(backing.alloc_calls(), 3);
}

TEST_F(BlockCacheTest, SplitAndCoalesce) {
  void* a = cache.allocate(256 * KiB, kStream1);
  void* b = cache.allocate(256 * KiB, kStream1);
  void* c = cache.allocate(256 * KiB, kStream1);
  EXPECT_EQ(distance(a, b), static_cast<std::ptrdiff_t>(256 * KiB));
  EXPECT_EQ(distance(b, c), static_cast<std::ptrdiff_t>(256 * KiB));
  cache.free(b);
  cache.free(a);
  void* ab = cache.allocate(512 * KiB, kStream1);
  EXPECT_EQ(ab, a);
  EXPECT_EQ(backing.alloc_calls(), 1);
  // Everything freed merges back into one whole segment, which empty_cache returns.
  cache.free(c);
  cache.free(ab);
  cache.empty_cache();
  EXPECT_EQ(backing.free_calls(), 1);
  EXPECT_EQ(reserved(), 0);
  // The same in the large pool.
  void* la = cache.allocate(3 * MiB, kStream1);
  void* lb = cache.allocate(3 * MiB, kStream1);
  void* lc = cache.allocate(3 * MiB, kStream1);
  cache.free(lb);
  cache.free(la);
  EXPECT_EQ(cache.allocate(6 * MiB, kStream1), la);
  EXPECT_EQ(backing.alloc_calls(), 2);
  (void)lc;
}

TEST_F(BlockCacheTest, NoReuseAcrossStreams) {
  void* p = cache.allocate(4 * KiB, kStream1);
  cache.free(p);
  void* q = cache.allocate(4 * KiB, kStream2);
  EXPECT_NE(q, p);
  EXPECT_EQ(backing.alloc_calls(), 2);  // stream 1's cached segment is not touched
  EXPECT_EQ(cache.allocate(4 * KiB, kStream1), p);
  EXPECT_EQ(backing.alloc_calls(), 2);
  cache.free(q);
  void* big = cache.allocate(12 * MiB, kStream1);
  cache.free(big);
  EXPECT_NE(cache.allocate(12 * MiB, kStream2), big);
  EXPECT_EQ(backing.alloc_calls(), 4);
}

TEST_F(BlockCacheTest, RecordStreamDefersReuseUntilTheEventCompletes) {
  void* p = cache.allocate(4 * KiB, kStream1);
  cache.record_stream(p, kStream1);  // the allocation stream needs no event
  cache.record_stream(p, kStream2);
  cache.record_stream(p, kStream2);  // recorded once
  cache.record_stream(p, kStream3);
  cache.free(p);
  EXPECT_EQ(sync.recorded(), 2);
  EXPECT_EQ(allocated(), 0);
  EXPECT_EQ(cache.stats().active_blocks.current, 1);  // pending, still active
  void* q = cache.allocate(4 * KiB, kStream1);
  EXPECT_NE(q, p);
  sync.complete(kStream2);
  void* r = cache.allocate(4 * KiB, kStream1);
  EXPECT_NE(r, p);  // stream 3 has not passed its event yet
  EXPECT_EQ(sync.outstanding(), 1u);
  sync.complete(kStream3);
  EXPECT_EQ(cache.allocate(4 * KiB, kStream1), p);
  EXPECT_EQ(sync.outstanding(), 0u);
  EXPECT_EQ(backing.alloc_calls(), 1);
  EXPECT_EQ(sync.synchronized(), 0);
  // A block freed without recorded streams is reusable at once, with no event.
  cache.free(q);
  EXPECT_EQ(cache.allocate(4 * KiB, kStream1), q);
  EXPECT_EQ(sync.recorded(), 2);
}

// A free that cannot record its events (the second stream's fails) changes nothing: the block stays
// allocated, with both streams still recorded, and no event is left behind; freed again once
// recording works, it waits for both streams as any other.
TEST_F(BlockCacheTest, AFreeWhoseEventCannotBeRecordedLeavesTheBlockAllocated) {
  void* p = cache.allocate(4 * KiB, kStream1);
  void* neighbour = cache.allocate(4 * KiB, kStream1);  // freed later: it must not merge p back in
  cache.record_stream(p, kStream2);
  cache.record_stream(p, kStream3);
  sync.fail_record_on(kStream3);
  EXPECT_TRUE(test::throws_with<Error>([&] { cache.free(p); }, "recording an event failed"));
  EXPECT_EQ(allocated(), static_cast<std::int64_t>(8 * KiB));
  EXPECT_EQ(sync.outstanding(), 0u);
  cache.free(neighbour);
  EXPECT_NE(cache.allocate(4 * KiB, kStream1), p);
  sync.fail_record_on(0);
  cache.free(p);
  EXPECT_EQ(sync.outstanding(), 2u);
  sync.complete(kStream2);
  EXPECT_NE(cache.allocate(4 * KiB, kStream1), p);  // stream 3 still holds it
  sync.complete(kStream3);
  EXPECT_EQ(cache.allocate(4 * KiB, kStream1), p);
}

// empty_cache() waits for the pending events; one that cannot be waited for stays pending (its
// block is not lost for good), and the next empty_cache() waits for it and frees the segment.
TEST_F(BlockCacheTest, AnEventThatCannotBeWaitedForStaysPending) {
  void* p = cache.allocate(4 * KiB, kStream1);
  cache.record_stream(p, kStream2);
  cache.free(p);
  sync.fail_synchronize(true);
  EXPECT_TRUE(test::throws_with<Error>([&] { cache.empty_cache(); }, "synchronizing an event failed"));
  EXPECT_EQ(sync.outstanding(), 1u);
  sync.fail_synchronize(false);
  cache.empty_cache();
  EXPECT_EQ(sync.outstanding(), 0u);
  EXPECT_EQ(reserved(), 0);
  EXPECT_EQ(backing.live_bytes(), 0u);
}

TEST_F(BlockCacheTest, UnknownPointersAreErrors) {
  void* p = cache.allocate(512, kStream1);
  char other = 0;
  EXPECT_TRUE(test::throws_with<Error>([&] { cache.free(&other); },
                                       "free: pointer " + std::string(hwaro::detail::str_cat(static_cast<void*>(&other))) +
                                           " was not allocated by the caching allocator of test:0"));
  cache.free(p);
  EXPECT_TRUE(test::throws_with<Error>([&] { cache.free(p); }, "or it was freed already"));
}

TEST_F(BlockCacheTest, RecordStreamIgnoresMemoryItDidNotAllocate) {
  char foreign[64] = {};  // a from_blob tensor's memory: its owner orders its reuse
  cache.record_stream(foreign, kStream2);
  void* p = cache.allocate(512, kStream1);
  cache.free(p);
  EXPECT_EQ(sync.recorded(), 0) << "nothing was recorded for the foreign pointer";
  EXPECT_EQ(cache.allocate(512, kStream1), p) << "the cache's own block is reused at once";
}

TEST_F(BlockCacheTest, EmptyCacheReleasesOnlyFullyFreeSegments) {
  void* a = cache.allocate(4 * KiB, kStream1);   // 2 MiB segment
  void* a2 = cache.allocate(4 * KiB, kStream1);  // same segment
  void* b = cache.allocate(3 * MiB, kStream1);   // 20 MiB segment
  void* c = cache.allocate(24 * MiB, kStream1);  // 24 MiB segment (the 17 MiB left of b's are too few)
  cache.free(a2);  // its segment still holds a
  cache.free(b);
  cache.free(c);
  cache.empty_cache();
  EXPECT_EQ(backing.free_calls(), 2);
  EXPECT_EQ(reserved(), static_cast<std::int64_t>(2 * MiB));
  EXPECT_EQ(cache.stats().segments.current, 1);
  EXPECT_EQ(backing.live().count(static_cast<char*>(a)), 1u);
  cache.free(a);
  cache.empty_cache();
  EXPECT_EQ(backing.free_calls(), 3);
  EXPECT_EQ(reserved(), 0);
  EXPECT_EQ(backing.live_bytes(), 0u);
}

TEST_F(BlockCacheTest, EmptyCacheWaitsForPendingFrees) {
  void* p = cache.allocate(3 * MiB, kStream1);
  cache.record_stream(p, kStream2);
  cache.free(p);
  cache.empty_cache();
  EXPECT_EQ(sync.synchronized(), 1);
  EXPECT_EQ(sync.outstanding(), 0u);
  EXPECT_EQ(reserved(), 0);
  EXPECT_EQ(cache.stats().active_blocks.current, 0);
}

TEST_F(BlockCacheTest, OutOfMemoryRetriesAfterFreeingTheCache) {
  void* p = cache.allocate(12 * MiB, kStream1);
  cache.free(p);  // cached, but only usable on stream 1
  backing.fail_next(1);
  void* q = cache.allocate(12 * MiB, kStream2);
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(backing.failed_calls(), 1);
  EXPECT_EQ(backing.free_calls(), 1);  // the cached segment went back before the retry
  EXPECT_EQ(reserved(), static_cast<std::int64_t>(12 * MiB));
  EXPECT_EQ(cache.stats().num_alloc_retries, 1);
  EXPECT_EQ(cache.stats().num_ooms, 0);
  cache.free(q);
}

TEST_F(BlockCacheTest, OutOfMemoryUsesPendingFreesBeforeRetrying) {
  void* p = cache.allocate(12 * MiB, kStream1);
  cache.record_stream(p, kStream2);
  cache.free(p);
  backing.fail_next(1);
  EXPECT_EQ(cache.allocate(12 * MiB, kStream1), p);  // waited for stream 2 instead
  EXPECT_EQ(sync.synchronized(), 1);
  EXPECT_EQ(cache.stats().num_alloc_retries, 0);
  EXPECT_EQ(backing.free_calls(), 0);
}

TEST_F(BlockCacheTest, SecondFailureThrowsOutOfMemoryError) {
  void* live = cache.allocate(4 * MiB, kStream1);  // 20 MiB reserved, 4 MiB allocated
  void* cached = cache.allocate(24 * MiB, kStream1);  // its own segment
  cache.free(cached);
  backing.fail_next(2);
  auto request = [&] { cache.allocate(50 * MiB, kStream1); };
  for (const char* part : {"Out of memory on test:0", "tried to allocate 50.00 MiB (52428800 bytes requested",
                           "4.00 MiB is allocated", "20.00 MiB is reserved", "16.00 MiB of it is free",
                           "smaller batch size", "hw::cuda::empty_cache()"}) {
    backing.fail_next(2);
    EXPECT_TRUE(test::throws_with<OutOfMemoryError>(request, part));
  }
  const BlockCacheStats s = cache.stats();
  EXPECT_EQ(s.num_ooms, 7);
  EXPECT_EQ(s.num_alloc_retries, 7);
  EXPECT_EQ(backing.free_calls(), 1);  // the 24 MiB segment went back on the first retry
  EXPECT_EQ(s.allocated_bytes.current, static_cast<std::int64_t>(4 * MiB));
  // The cache still works after an OOM.
  void* after = cache.allocate(MiB, kStream1);
  EXPECT_NE(after, nullptr);
  cache.free(after);
  cache.free(live);
  EXPECT_TRUE(test::throws_with<OutOfMemoryError>(
      [&] { cache.allocate(std::numeric_limits<std::size_t>::max(), kStream1); }, "tried to allocate"));
  // A request of INT64_MAX bytes (hw::empty({INT64_MAX}) in uint8) rounds to 2^63: shown as such,
  // not as a negative size.
  const std::size_t huge = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(test::throws_with<OutOfMemoryError>([&] { cache.allocate(huge, kStream1); },
                                                  "tried to allocate 8589934592.00 GiB (9223372036854775807 bytes "
                                                  "requested; the device could not provide a segment of "
                                                  "8589934592.00 GiB)"));
}

TEST_F(BlockCacheTest, StatsAndPeaks) {
  void* a = cache.allocate(1000, kStream1);    // 1024 B in a 2 MiB segment
  void* b = cache.allocate(3 * MiB, kStream1);  // a 20 MiB segment
  BlockCacheStats s = cache.stats();
  EXPECT_EQ(s.allocated_bytes.current, static_cast<std::int64_t>(1024 + 3 * MiB));
  EXPECT_EQ(s.reserved_bytes.current, static_cast<std::int64_t>(22 * MiB));
  EXPECT_EQ(s.segments.current, 2);
  EXPECT_EQ(s.active_blocks.current, 2);
  cache.free(b);
  s = cache.stats();
  EXPECT_EQ(s.allocated_bytes.current, 1024);
  EXPECT_EQ(s.allocated_bytes.peak, static_cast<std::int64_t>(1024 + 3 * MiB));
  EXPECT_EQ(s.active_blocks.current, 1);
  EXPECT_EQ(s.active_blocks.peak, 2);
  EXPECT_EQ(s.reserved_bytes.current, static_cast<std::int64_t>(22 * MiB));
  cache.reset_peak_stats();
  void* c = cache.allocate(512, kStream1);
  cache.empty_cache();
  s = cache.stats();
  EXPECT_EQ(s.allocated_bytes.current, 1536);
  EXPECT_EQ(s.allocated_bytes.peak, 1536);
  EXPECT_EQ(s.reserved_bytes.current, static_cast<std::int64_t>(2 * MiB));
  EXPECT_EQ(s.reserved_bytes.peak, static_cast<std::int64_t>(22 * MiB));
  EXPECT_EQ(s.segments.current, 1);
  EXPECT_EQ(s.segments.peak, 2);
  EXPECT_EQ(s.num_alloc_retries, 0);
  EXPECT_EQ(s.num_ooms, 0);
  const std::string summary = cache.memory_summary();
  for (const char* part : {"test:0", "Allocated memory", "1.50 KiB", "Reserved memory", "2.00 MiB", "22.00 MiB",
                           "Segments", "Allocation retries", "Out-of-memory errors"}) {
    EXPECT_NE(summary.find(part), std::string::npos) << part << " missing from\n" << summary;
  }
  cache.free(a);
  cache.free(c);
}

// Checks what must hold between any two calls, against the model of live blocks.
struct LiveBlock {
  std::size_t rounded;
  StreamId stream;
};

void check_invariants(const BlockCache& cache, const FakeBacking& backing, const std::map<char*, LiveBlock>& live) {
  std::int64_t block_bytes = 0;
  std::int64_t rounded_bytes = 0;
  char* end_of_previous = nullptr;
  const std::map<char*, std::size_t> segments = backing.live();
  for (const auto& [ptr, b] : live) {
    const std::size_t size = cache.block_size(ptr);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(ptr) % 512, 0u);
    ASSERT_GE(size, b.rounded);
    if (b.rounded <= BlockCache::kSmallSize) {
      ASSERT_EQ(size, b.rounded);
    } else {
      ASSERT_LE(size - b.rounded, BlockCache::kSmallSize);
    }
    ASSERT_TRUE(end_of_previous == nullptr || end_of_previous <= ptr) << "live blocks overlap";
    end_of_previous = ptr + size;
    auto seg = segments.upper_bound(ptr);
    ASSERT_NE(seg, segments.begin());
    --seg;
    ASSERT_LE(ptr + size, seg->first + seg->second) << "block outside its segment";
    block_bytes += static_cast<std::int64_t>(size);
    rounded_bytes += static_cast<std::int64_t>(b.rounded);
  }
  const BlockCacheStats s = cache.stats();
  ASSERT_EQ(s.allocated_bytes.current, block_bytes);
  ASSERT_LE(rounded_bytes, s.allocated_bytes.current);
  ASSERT_GE(s.active_blocks.current, static_cast<std::int64_t>(live.size()));
  ASSERT_EQ(s.reserved_bytes.current, static_cast<std::int64_t>(backing.live_bytes()));
  ASSERT_EQ(s.segments.current, static_cast<std::int64_t>(segments.size()));
  ASSERT_GE(s.reserved_bytes.current, s.allocated_bytes.current);
  ASSERT_GE(s.allocated_bytes.peak, s.allocated_bytes.current);
}

std::size_t random_request(std::mt19937_64& rng) {
  const int kind = std::uniform_int_distribution<int>(0, 99)(rng);
  if (kind < 60) return std::uniform_int_distribution<std::size_t>(1, 64 * KiB)(rng);
  if (kind < 85) return std::uniform_int_distribution<std::size_t>(64 * KiB, 2 * MiB)(rng);
  return std::uniform_int_distribution<std::size_t>(2 * MiB, 24 * MiB)(rng);
}

TEST_F(BlockCacheTest, RandomizedAgainstAModel) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  backing.set_capacity(160 * MiB);  // small enough that the retry and OOM paths run too
  std::map<char*, LiveBlock> live;
  const StreamId streams[] = {kStream1, kStream2, kStream3};
  auto pick_live = [&]() {
    auto it = live.begin();
    std::advance(it, std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng));
    return it;
  };
  int ooms = 0;
  for (int step = 0; step < 3000; ++step) {
    const int op = std::uniform_int_distribution<int>(0, 99)(rng);
    const StreamId stream = streams[std::uniform_int_distribution<int>(0, 2)(rng)];
    if (op < 45 || live.empty()) {
      const std::size_t n = random_request(rng);
      try {
        char* p = static_cast<char*>(cache.allocate(n, stream));
        ASSERT_TRUE(live.emplace(p, LiveBlock{BlockCache::round_size(n), stream}).second) << "pointer handed out twice";
      } catch (const OutOfMemoryError& e) {
        ++ooms;
        ASSERT_NE(std::string(e.what()).find("Out of memory on test:0"), std::string::npos);
      }
    } else if (op < 85) {
      const auto it = pick_live();
      cache.free(it->first);
      live.erase(it);
    } else if (op < 93) {
      cache.record_stream(pick_live()->first, stream);
    } else if (op < 98) {
      sync.complete(stream);
    } else {
      cache.empty_cache();
    }
    ASSERT_NO_FATAL_FAILURE(check_invariants(cache, backing, live)) << "after step " << step;
  }
  EXPECT_EQ(cache.stats().num_ooms, ooms);
  for (const auto& entry : live) cache.free(entry.first);
  cache.empty_cache();
  EXPECT_EQ(backing.live_bytes(), 0u);
  EXPECT_EQ(sync.outstanding(), 0u);
  const BlockCacheStats s = cache.stats();
  EXPECT_EQ(s.allocated_bytes.current, 0);
  EXPECT_EQ(s.active_blocks.current, 0);
  EXPECT_EQ(s.active_bytes.current, 0);
}

TEST_F(BlockCacheTest, ThreadSafetySmoke) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(t));
      struct Mine {
        unsigned char* ptr;
        std::size_t size;
      };
      std::vector<Mine> mine;
      const auto tag = static_cast<unsigned char>(t + 1);
      // Each live block carries its owner's tag at both ends; an overlap with another
      // thread's block would overwrite one of them.
      auto intact = [tag](const Mine& m) { return m.ptr[0] == tag && m.ptr[m.size - 1] == tag; };
      for (int i = 0; i < 1500; ++i) {
        const int op = std::uniform_int_distribution<int>(0, 99)(rng);
        const StreamId stream = 1 + static_cast<StreamId>(std::uniform_int_distribution<int>(0, 2)(rng));
        if (op < 45 || mine.empty()) {
          const std::size_t n = random_request(rng);
          auto* p = static_cast<unsigned char*>(cache.allocate(n, stream));
          p[0] = tag;
          p[n - 1] = tag;
          mine.push_back(Mine{p, n});
        } else if (op < 90) {
          const std::size_t k = std::uniform_int_distribution<std::size_t>(0, mine.size() - 1)(rng);
          if (!intact(mine[k])) ++bad[static_cast<std::size_t>(t)];
          cache.free(mine[k].ptr);
          mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
        } else if (op < 96) {
          cache.record_stream(mine.back().ptr, stream);
        } else if (op < 98) {
          sync.complete(stream);
        } else {
          cache.empty_cache();
        }
      }
      for (const Mine& m : mine) {
        if (!intact(m)) ++bad[static_cast<std::size_t>(t)];
        cache.free(m.ptr);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[static_cast<std::size_t>(t)], 0) << "thread " << t;
  cache.empty_cache();
  const BlockCacheStats s = cache.stats();
  EXPECT_EQ(s.allocated_bytes.current, 0);
  EXPECT_EQ(s.active_blocks.current, 0);
  EXPECT_EQ(s.reserved_bytes.current, 0);
  EXPECT_EQ(s.segments.current, 0);
  EXPECT_EQ(backing.live_bytes(), 0u);
  EXPECT_EQ(sync.outstanding(), 0u);
  EXPECT_GE(s.allocated_bytes.peak, 512);
}

}  // namespace
}  // namespace hwaro
