#include "cpu/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu/blas_threads.h"
#include "hwaro/errors.h"

namespace hwaro::cpu {
namespace {

thread_local bool in_parallel_region = false;

// One job at a time: callers of parallel_for from different threads take turns.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) { start(threads); }
  ~ThreadPool() { stop(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int threads) {
    std::lock_guard job_lock(job_mutex_);
    stop();
    start(threads);
  }

  void run(std::int64_t chunks, const std::function<void(std::int64_t)>& chunk_fn) {
    std::lock_guard job_lock(job_mutex_);
    {
      std::lock_guard lock(mutex_);
      chunk_fn_ = &chunk_fn;
      chunks_ = chunks;
      next_chunk_.store(0);
      busy_workers_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    work_on_chunks();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return busy_workers_ == 0; });
    chunk_fn_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  // Called by the constructor or with job_mutex_ held, so generation_ cannot move. A new worker
  // begins at the current generation: one that began at 0 took the last job (long finished) for a
  // new one, counted itself done in the next job's busy_workers_, and so let run() return while
  // a chunk still ran (test_conv crashed under load after set_num_threads).
  void start(int threads) {
    stopping_ = false;
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, seen = generation_] { worker_loop(seen); });
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  void worker_loop(std::uint64_t seen) {
    in_parallel_region = true;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      work_on_chunks();
      std::lock_guard lock(mutex_);
      if (--busy_workers_ == 0) done_.notify_one();
    }
  }

  void work_on_chunks() {
    const bool was_in_region = in_parallel_region;
    in_parallel_region = true;
    for (;;) {
      const std::int64_t chunk = next_chunk_.fetch_add(1);
      if (chunk >= chunks_) break;
      try {
        (*chunk_fn_)(chunk);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
    in_parallel_region = was_in_region;
  }

  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::int64_t)>* chunk_fn_ = nullptr;
  std::int64_t chunks_ = 0;
  std::atomic<std::int64_t> next_chunk_{0};
  int busy_workers_ = 0;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

// The CPUs this process may run on (taskset, a container's cpuset), as nproc counts them: more
// threads than that would share those CPUs and only slow each other down. hardware_concurrency()
// counts every CPU of the machine; it is the answer where the mask cannot be read.
int default_threads() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) return CPU_COUNT(&allowed);
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int> configured_threads{0};

ThreadPool& pool() {
  static ThreadPool* instance = [] {
    if (configured_threads.load() == 0) configured_threads.store(default_threads());
    return new ThreadPool(configured_threads.load());  // leaked on purpose: workers must outlive static destructors
  }();
  return *instance;
}

}  // namespace

namespace detail {

bool run_serially(std::int64_t n, std::int64_t grain) {
  return in_parallel_region || n <= std::max<std::int64_t>(grain, 1) || get_num_threads() == 1;
}

void parallel_for_pooled(std::int64_t begin, std::int64_t end, std::int64_t grain,
                         const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const std::int64_t n = end - begin;
  grain = std::max<std::int64_t>(grain, 1);
  const int threads = get_num_threads();
  const std::int64_t chunks = std::min<std::int64_t>(threads, (n + grain - 1) / grain);
  const std::int64_t per_chunk = (n + chunks - 1) / chunks;
  pool().run(chunks, [&](std::int64_t chunk) {
    const std::int64_t b = begin + chunk * per_chunk;
    const std::int64_t e = std::min(end, b + per_chunk);
    if (b < e) fn(b, e);
  });
}

}  // namespace detail

void set_num_threads(int n) {
  HWARO_CHECK(n >= 1, "set_num_threads: the number of threads must be at least 1, got ", n);
  configured_threads.store(n);
  pool().resize(n);
  set_blas_threads(n);
}

int get_num_threads() {
  const int n = configured_threads.load();
  return n == 0 ? pool().size() : n;
}

}  // namespace hwaro::cpu
