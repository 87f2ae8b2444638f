// core/handle_pool.h, which the CUDA backend's cuBLAS and cuDNN handles come from, with a stand-in
// library that counts what it makes and ends: a thread keeps its handle for a device, two threads
// alive at once never share one, and a thread started after another has ended (DataParallel's
// replicas, a new thread every step) takes the old one's handle instead of making another.
#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/handle_pool.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

struct CountingLibrary {
  using Handle = int*;
  static constexpr const char* kName = "counting";
  static inline std::atomic<int> created{0};
  static inline std::atomic<int> destroyed{0};
  static inline bool fail_next_create = false;
  static void create(Handle* h) {
    if (fail_next_create) {
      fail_next_create = false;
      throw std::runtime_error("create failed");
    }
    *h = new int(created++);
  }
  static void destroy(Handle h) {
    ++destroyed;
    delete h;
  }
};

class HandlePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CountingLibrary::created = 0;
    CountingLibrary::destroyed = 0;
  }
};

TEST_F(HandlePoolTest, AThreadKeepsOneHandlePerDevice) {
  HandlePool<CountingLibrary> pool;
  ThreadHandleLease<CountingLibrary> lease(pool);
  int* first = lease.get(0);
  EXPECT_EQ(lease.get(0), first);
  int* other_device = lease.get(3);
  EXPECT_NE(other_device, first);
  EXPECT_EQ(lease.get(3), other_device);
  EXPECT_EQ(CountingLibrary::created, 2);
}

TEST_F(HandlePoolTest, ThreadsStartedOneAfterAnotherReuseTheFirstHandle) {
  HandlePool<CountingLibrary> pool;
  std::set<int*> seen;
  for (int step = 0; step < 5; ++step) {
    int* used = nullptr;
    std::thread([&] {
      ThreadHandleLease<CountingLibrary> lease(pool);  // as a thread_local of the thread
      used = lease.get(1);
    }).join();
    seen.insert(used);
  }
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(CountingLibrary::created, 1);
}

TEST_F(HandlePoolTest, ThreadsAliveAtOnceNeverShareAHandle) {
  HandlePool<CountingLibrary> pool;
  constexpr int kThreads = 4;
  std::vector<int*> handles(kThreads);
  std::atomic<int> holding{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ThreadHandleLease<CountingLibrary> lease(pool);
      handles[static_cast<std::size_t>(i)] = lease.get(0);
      ++holding;
      while (holding.load() < kThreads) std::this_thread::yield();  // every thread holds its handle now
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(std::set<int*>(handles.begin(), handles.end()).size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(CountingLibrary::created, kThreads);

  // All four went back to the pool: four new threads at once make none.
  holding = 0;
  threads.clear();
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      ThreadHandleLease<CountingLibrary> lease(pool);
      lease.get(0);
      ++holding;
      while (holding.load() < kThreads) std::this_thread::yield();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(CountingLibrary::created, kThreads);
}

TEST_F(HandlePoolTest, ThePoolEndsEveryHandleGivenBack) {
  {
    HandlePool<CountingLibrary> pool;
    {
      ThreadHandleLease<CountingLibrary> lease(pool);
      lease.get(0);
      lease.get(1);
    }
    EXPECT_EQ(CountingLibrary::destroyed, 0);  // back in the pool, not ended
  }
  EXPECT_EQ(CountingLibrary::destroyed, 2);
}

TEST_F(HandlePoolTest, AFailedCreateIsTheLibrarysErrorAndTheNextCallTriesAgain) {
  HandlePool<CountingLibrary> pool;
  ThreadHandleLease<CountingLibrary> lease(pool);
  CountingLibrary::fail_next_create = true;
  EXPECT_THROW(lease.get(0), std::runtime_error);
  EXPECT_NE(lease.get(0), nullptr);
  EXPECT_EQ(CountingLibrary::created, 1);
}

TEST_F(HandlePoolTest, ADeviceBeyondThePoolIsAClearError) {
  HandlePool<CountingLibrary> pool;
  ThreadHandleLease<CountingLibrary> lease(pool);
  EXPECT_TRUE(throws_with<Error>([&] { lease.get(64); }, "counting handles: device index 64 is beyond 64"));
  EXPECT_TRUE(throws_with<Error>([&] { lease.get(-1); }, "device index -1"));
  EXPECT_EQ(CountingLibrary::created, 0);
}

}  // namespace
}  // namespace hwaro::test
