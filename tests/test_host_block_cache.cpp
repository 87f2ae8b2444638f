// core's HostBlockCache (the caching pinned host allocator's logic) on the CPU, with a fake
// backing allocator and fake events: size classes, reuse only after the event of every copy
// recorded on a block has completed, the fall-back wait when an event cannot be made, and
// out of memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "core/host_block_cache.h"
#include "hwaro/errors.h"

namespace hwaro {
namespace {

class FakeHostBacking final : public BackingAllocator {
 public:
  void* raw_alloc(std::size_t nbytes) override {
    ++alloc_calls;
    if (live_bytes + nbytes > capacity) return nullptr;
    void* p = std::malloc(nbytes);
    live.emplace(p, nbytes);
    live_bytes += nbytes;
    return p;
  }
  void raw_free(void* ptr) override {
    const auto it = live.find(ptr);
    ASSERT_NE(it, live.end()) << "raw_free of a pointer raw_alloc did not return";
    live_bytes -= it->second;
    live.erase(it);
    std::free(ptr);
  }
  std::map<void*, std::size_t> live;
  std::size_t live_bytes = 0;
  std::size_t capacity = std::size_t{1} << 30;
  int alloc_calls = 0;
};

// Events complete when the test says so; record() can be told to fail.
class FakeHostEvents final : public HostEvents {
 public:
  EventHandle record(int device, StreamId stream) override {
    if (fail_records) return 0;
    recorded.emplace_back(device, stream);
    pending.insert(++next);
    return next;
  }
  bool query(EventHandle event) override {
    if (event == throw_on_query) throw Error("querying an event failed");
    return pending.count(event) == 0;
  }
  void release(EventHandle event) override { EXPECT_TRUE(released.insert(event).second) << "event " << event << " released twice"; }
  void synchronize_stream(int device, StreamId stream) override { waited.emplace_back(device, stream); }
  void complete_all() { pending.clear(); }

  bool fail_records = false;
  EventHandle throw_on_query = 0;  // query() of this event throws, as a broken GPU context's would
  EventHandle next = 0;
  std::set<EventHandle> pending;
  std::set<EventHandle> released;
  std::vector<std::pair<int, StreamId>> recorded;
  std::vector<std::pair<int, StreamId>> waited;
};

class HostBlockCacheTest : public ::testing::Test {
 protected:
  FakeHostBacking backing_;
  FakeHostEvents events_;
};

TEST_F(HostBlockCacheTest, SizeClassesArePowersOfTwoOfAtLeast512Bytes) {
  EXPECT_EQ(HostBlockCache::size_class(1), 512u);
  EXPECT_EQ(HostBlockCache::size_class(512), 512u);
  EXPECT_EQ(HostBlockCache::size_class(513), 1024u);
  EXPECT_EQ(HostBlockCache::size_class(3000), 4096u);
  EXPECT_EQ(HostBlockCache::size_class((1u << 20) + 1), 2u << 20);
}

TEST_F(HostBlockCacheTest, AFreeBlockIsReusedForItsSizeClassWithoutANewAllocation) {
  HostBlockCache cache(backing_, events_);
  EXPECT_EQ(cache.allocate(0), nullptr);
  void* a = cache.allocate(3000);
  EXPECT_EQ(backing_.live.at(a), 4096u);
  cache.free(a);
  EXPECT_EQ(cache.cached_bytes(), 4096u);
  EXPECT_EQ(cache.allocate(2100), a);  // same class
  EXPECT_EQ(backing_.alloc_calls, 1);
  void* b = cache.allocate(5000);  // another class: a new block
  EXPECT_NE(b, a);
  EXPECT_EQ(cache.live_bytes(), 4096u + 8192u);
  cache.free(a);
  cache.free(b);
  cache.empty_cache();
  EXPECT_TRUE(backing_.live.empty());
}

TEST_F(HostBlockCacheTest, AFreedBlockWaitsForItsCopiesEventsBeforeReuse) {
  HostBlockCache cache(backing_, events_);
  auto* a = static_cast<char*>(cache.allocate(1000));
  cache.record_event(a + 100, /*device=*/0, /*stream=*/7);  // an interior pointer counts
  cache.record_event(a, 1, 9);
  ASSERT_EQ(events_.recorded.size(), 2u);  // recorded when the copy is queued, not at free
  EXPECT_EQ(events_.recorded[0], (std::pair<int, StreamId>{0, 7}));
  cache.free(a);
  EXPECT_EQ(cache.cached_bytes(), 0u);  // pending, not free
  void* b = cache.allocate(1000);
  EXPECT_NE(b, a) << "reused while a copy might still be reading it";
  events_.complete_all();
  cache.free(b);
  void* c = cache.allocate(1000);
  EXPECT_TRUE(c == a || c == b);
  EXPECT_EQ(events_.released.size(), 2u);
  cache.free(c);
}

TEST_F(HostBlockCacheTest, ALaterCopyOnTheSameStreamSupersedesTheEarlierEvent) {
  HostBlockCache cache(backing_, events_);
  void* a = cache.allocate(700);
  cache.record_event(a, 0, 3);
  cache.record_event(a, 0, 3);
  cache.record_event(a, 0, 4);  // another stream keeps its own
  EXPECT_EQ(events_.released, (std::set<EventHandle>{1}));  // the first event of stream 3
  events_.pending.erase(2);  // stream 3 has passed its newest copy, stream 4 has not
  EXPECT_TRUE(cache.copies_pending(a));
  events_.pending.erase(3);
  EXPECT_FALSE(cache.copies_pending(a));
  EXPECT_EQ(events_.released, (std::set<EventHandle>{1, 2, 3}));
  cache.free(a);
  EXPECT_EQ(cache.allocate(700), a);
}

TEST_F(HostBlockCacheTest, CopiesPendingAnswersForALiveBlockThatIsKept) {
  // A pool of batch buffers keeps its blocks and asks before writing into one again.
  HostBlockCache cache(backing_, events_);
  auto* a = static_cast<char*>(cache.allocate(4096));
  EXPECT_FALSE(cache.copies_pending(a));
  cache.record_event(a, 0, 1);
  EXPECT_TRUE(cache.copies_pending(a + 4095));
  EXPECT_TRUE(cache.copies_pending(a));  // asking again does not consume the event
  events_.complete_all();
  EXPECT_FALSE(cache.copies_pending(a));
  EXPECT_EQ(events_.released.size(), 1u);
  int pageable = 0;
  EXPECT_FALSE(cache.copies_pending(&pageable));
  cache.free(a);
}

// A query that throws after an earlier copy's event was released leaves that event out of the
// block's list, so that it is not released again once the queries work (FakeHostEvents fails then).
TEST_F(HostBlockCacheTest, AQueryThatThrowsReleasesNoEventTwice) {
  HostBlockCache cache(backing_, events_);
  void* a = cache.allocate(512);
  cache.record_event(a, 0, 1);  // event 1
  cache.record_event(a, 0, 2);  // event 2
  events_.pending.erase(1);
  events_.throw_on_query = 2;
  EXPECT_THROW(cache.copies_pending(a), Error);
  events_.throw_on_query = 0;
  EXPECT_TRUE(cache.copies_pending(a));
  events_.complete_all();
  EXPECT_FALSE(cache.copies_pending(a));
  EXPECT_EQ(events_.released, (std::set<EventHandle>{1, 2}));
  cache.free(a);
}

TEST_F(HostBlockCacheTest, PointersOutsideLiveBlocksAreIgnored) {
  HostBlockCache cache(backing_, events_);
  int pageable = 0;
  cache.record_event(&pageable, 0, 1);
  EXPECT_FALSE(cache.contains(&pageable));
  auto* a = static_cast<char*>(cache.allocate(512));
  EXPECT_TRUE(cache.contains(a + 511));
  EXPECT_FALSE(cache.contains(a + 512));
  cache.free(a);
  cache.record_event(a, 0, 1);  // freed: no longer live
  EXPECT_TRUE(events_.recorded.empty());
}

TEST_F(HostBlockCacheTest, WhenAnEventCannotBeMadeTheCopysStreamIsWaitedFor) {
  HostBlockCache cache(backing_, events_);
  void* a = cache.allocate(600);
  events_.fail_records = true;
  cache.record_event(a, 2, 5);
  ASSERT_EQ(events_.waited.size(), 1u);
  EXPECT_EQ(events_.waited[0], (std::pair<int, StreamId>{2, 5}));
  EXPECT_FALSE(cache.copies_pending(a));
  cache.free(a);
  EXPECT_EQ(cache.allocate(600), a);  // safe at once
}

TEST_F(HostBlockCacheTest, TheDestructorReleasesPendingEventsAndEveryBlock) {
  {
    HostBlockCache cache(backing_, events_);
    void* a = cache.allocate(512);
    cache.record_event(a, 0, 1);
    cache.free(a);
    (void)cache.allocate(2048);
  }
  EXPECT_EQ(events_.released, (std::set<EventHandle>{1}));
  EXPECT_TRUE(backing_.live.empty());
}

TEST_F(HostBlockCacheTest, OutOfMemoryReleasesTheCacheRetriesOnceThenThrows) {
  backing_.capacity = 8192;
  HostBlockCache cache(backing_, events_);
  void* a = cache.allocate(4096);
  cache.free(a);  // cached
  void* b = cache.allocate(8192);  // needs the cached block's memory back
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(backing_.live.size(), 1u);  // the cached 4096-byte block was returned first
  try {
    (void)cache.allocate(1024);
    FAIL() << "did not throw";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pinned host memory: allocating 1024 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("use pageable memory"), std::string::npos) << what;
  }
  cache.free(b);
}

TEST_F(HostBlockCacheTest, ARequestNoPowerOfTwoCanHoldIsOutOfMemory) {
  HostBlockCache cache(backing_, events_);
  const std::size_t too_large = (std::size_t{1} << 63) + 1;
  try {
    (void)cache.allocate(too_large);
    FAIL() << "did not throw";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a request of 9223372036854775809 bytes"), std::string::npos) << what;
  }
  EXPECT_TRUE(backing_.live.empty());
}

}  // namespace
}  // namespace hwaro
