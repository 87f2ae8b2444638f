#pragma once
// DataLoader (guide §3.2, Dev Tip 3): batches of a Dataset, loaded by worker threads.
//
//   hw::data::DataLoader loader(dataset, {.batch_size = 128, .shuffle = true, .num_workers = 4,
//                                         .pin_memory = true});
//   for (auto& batch : loader) { auto x = batch.data.to(dev, /*non_blocking=*/true); ... }
//
// Each worker thread takes the next batch number, calls get() for its samples and
// collates them; batches reach the loop in order. At most prefetch_factor * num_workers
// batches are loaded ahead of the loop, so memory stays flat with a slow consumer.
// Each begin() starts an epoch; leaving the loop early (break, exception) or destroying
// the loader stops the workers after the sample each is loading.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwaro/data/dataset.h"

namespace hwaro::data {

// A batch: the samples' data and targets stacked along a new dim 0.
struct Batch {
  Tensor data;
  Tensor target;
};

// Where a collate function gets its output tensors: with pin_memory, page-locked host tensors
// from a pool that reuses a buffer once nothing refers to it any more and no non_blocking copy
// from it is still running (the pinned allocator's copy event says so); else plain ones.
// Thread-safe (workers collate at once).
class BatchAllocator {
 public:
  explicit BatchAllocator(bool pin_memory);
  ~BatchAllocator();
  BatchAllocator(const BatchAllocator&) = delete;
  BatchAllocator& operator=(const BatchAllocator&) = delete;
  Tensor empty(IntArrayRef sizes, DType dtype);
  bool pin_memory() const { return pin_memory_; }
  std::size_t pooled_buffers() const;  // buffers the pool holds (for tests)

 private:
  struct Pool;
  bool pin_memory_;
  std::unique_ptr<Pool> pool_;
};

// Turns the examples of one batch into a Batch, taking its output tensors from `allocator`.
using CollateFn = std::function<Batch(std::vector<Example>& examples, BatchAllocator& allocator)>;

struct DataLoaderOptions {
  std::size_t batch_size = 1;
  bool shuffle = false;
  int num_workers = 0;        // 0: the loop's own thread loads each batch when it is asked for
  bool pin_memory = false;    // collate into page-locked memory (warns once and uses pageable without a GPU)
  bool drop_last = false;     // drop a last batch smaller than batch_size
  int prefetch_factor = 2;    // batches in flight per worker
  // Shuffle order and per-sample randomness of transforms. Unset: drawn from the default generator
  // when the loader is built, as PyTorch's DataLoader draws its base seed from torch's generator, so
  // hw::manual_seed makes a run repeatable and a loader built anew each epoch still reshuffles.
  // options().seed then holds the value drawn.
  std::optional<std::uint64_t> seed;
  CollateFn collate{};        // empty: stack data and targets (default_collate)
  bool persistent_workers = false;  // keep the worker threads alive between epochs (needs num_workers > 0)
};

// Stacks every example's data and target along a new dim 0; all must share shape and dtype.
Batch default_collate(std::vector<Example>& examples, BatchAllocator& allocator);
// Stacks tensors of one shape and dtype along a new dim 0 into a tensor from `allocator`.
Tensor stack_into(const std::vector<Tensor>& tensors, BatchAllocator& allocator, const char* what);

// Where the time of the last (or current) epoch went, from the loop's point of view.
struct LoaderStats {
  std::size_t batches = 0;
  double wait_seconds = 0;        // the loop blocked waiting for a batch
  double compute_seconds = 0;     // the loop's own time between batches
  double load_seconds_per_batch = 0;  // mean time to get() and collate one batch (in whichever thread)
  double waited_fraction() const;     // wait / (wait + compute)
  // "input-bound: the loop waited 61% of the time; raise num_workers" or "compute-bound: ...".
  std::string verdict(int num_workers) const;
};

class BatchProducer;  // the worker threads (src/data)

class DataLoader {
 public:
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  class iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(iterator&& other) noexcept;
    iterator& operator=(iterator&& other) noexcept;
    ~iterator();
    Batch& operator*() { return current_; }
    Batch* operator->() { return &current_; }
    iterator& operator++();
    bool operator==(const iterator& other) const { return done() == other.done(); }

   private:
    friend class DataLoader;
    iterator(DataLoader* loader, std::uint64_t epoch);
    bool done() const { return loader_ == nullptr; }
    void fetch();
    DataLoader* loader_ = nullptr;
    std::uint64_t epoch_ = 0;
    Batch current_;
  };

  // Starts a new epoch (ending any previous one, whose iterator then throws hw::Error on ++ rather
  // than take this epoch's batches) and returns its first batch.
  iterator begin();
  iterator end() { return {}; }
  // Batches per epoch.
  std::size_t size() const;
  // The current (or last) epoch's timings and verdict.
  LoaderStats stats() const;
  std::string verdict() const { return stats().verdict(options_.num_workers); }
  const DataLoaderOptions& options() const { return options_; }
  std::uint64_t epochs_started() const { return epoch_; }
  // Worker threads alive now (0 between epochs unless persistent_workers).
  std::size_t worker_threads() const;

 private:
  std::vector<std::vector<std::size_t>> plan_epoch(std::uint64_t epoch) const;
  std::optional<Batch> next_batch();   // blocks; nullopt at the end of the epoch
  void end_epoch(std::uint64_t epoch);
  Batch load_here(const std::vector<std::size_t>& indices);

  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<BatchAllocator> allocator_;
  std::unique_ptr<BatchProducer> producer_;
  std::uint64_t epoch_ = 0;      // epochs started; the running one is epoch_ - 1
  bool epoch_open_ = false;
  std::vector<std::vector<std::size_t>> plan_;  // used when num_workers == 0
  std::size_t next_ = 0;
  std::int64_t last_return_ns_ = -1;  // when the loop last got a batch, for compute time
  LoaderStats stats_;
};

}  // namespace hwaro::data
