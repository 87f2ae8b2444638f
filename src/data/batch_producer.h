#pragma once
// BatchProducer: the DataLoader's worker threads. Each worker claims the next batch
// number of the epoch's plan, loads it without holding the lock, and files the result
// (a Batch or the exception it threw) under its number; next() hands batches out in
// plan order. A worker may claim batch k only while k < consumed + capacity, which
// bounds the batches loaded ahead of the loop.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "hwaro/data/dataloader.h"
#include "hwaro/data/sample_rng.h"

namespace hwaro::data {

class BatchProducer {
 public:
  // Loads one batch; `cancelled` turns true when the epoch is abandoned (then return nullopt).
  using LoadFn = std::function<std::optional<Batch>(const std::vector<std::size_t>& indices, int worker,
                                                    const std::function<bool()>& cancelled)>;
  BatchProducer(int num_workers, std::size_t capacity, LoadFn load);
  ~BatchProducer();
  BatchProducer(const BatchProducer&) = delete;
  BatchProducer& operator=(const BatchProducer&) = delete;

  // Starts an epoch over `plan` (one index list per batch); starts the threads if they are not running.
  void start(std::vector<std::vector<std::size_t>> plan, SampleContext context);
  // The next batch in order; nullopt after the last. Rethrows a worker's exception for that batch.
  std::optional<Batch> next();
  // Abandons the epoch and waits until no worker is inside the data set; joins the threads
  // unless keep_threads.
  void finish(bool keep_threads);

  // Totals over the current epoch: batches loaded and the seconds spent loading them.
  std::size_t batches_loaded() const;
  double load_seconds() const;
  std::size_t threads_running() const;

 private:
  struct Slot {
    std::optional<Batch> batch;
    std::exception_ptr error;
  };
  void work(int worker);
  bool claimable() const;  // with mutex_ held

  const int num_workers_;
  const std::size_t capacity_;
  const LoadFn load_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;   // workers wait for something to claim
  std::condition_variable ready_cv_;  // the loop waits for its batch; finish() waits for idle workers
  std::vector<std::thread> threads_;
  std::vector<std::vector<std::size_t>> plan_;
  SampleContext context_{};
  std::map<std::size_t, Slot> ready_;
  std::size_t next_claim_ = 0;
  std::size_t consumed_ = 0;
  std::size_t busy_ = 0;
  std::size_t loaded_ = 0;
  std::int64_t load_ns_ = 0;
  bool active_ = false;
  bool stop_ = false;
  std::atomic<std::uint64_t> generation_{0};  // bumped when an epoch is abandoned
};

}  // namespace hwaro::data
