// DataLoader: epoch plans, the iterator, loading on the loop's thread or through BatchProducer.
#include "hwaro/data/dataloader.h"

#include <chrono>
#include <limits>
#include <new>
#include <numeric>

#include "data/batch_producer.h"
#include "hwaro/data/sample_rng.h"
#include "hwaro/ops.h"

namespace hwaro::data {

namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
constexpr std::uint64_t kShuffleStream = ~std::uint64_t{0};  // the sample index no sample has

// One draw from the default generator: 63 random bits, as torch.empty((), dtype=torch.int64).random_().
std::uint64_t seed_from_default_generator() {
  return static_cast<std::uint64_t>(randint(0, std::numeric_limits<std::int64_t>::max(), {}).item<std::int64_t>());
}

// Rethrows the exception being handled with `where` before its message, as the same hwaro error
// type (else hw::Error): as PyTorch re-raises a worker's exception as its own type, a caller's
// catch (const hw::IndexError&) or (const hw::OutOfMemoryError&) must still see it. A data set's
// std::bad_alloc (PyTorch's MemoryError) is the host's out-of-memory, so hw::OutOfMemoryError too.
[[noreturn]] void rethrow_loading_error(const std::string& where) {
  try {
    throw;
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(where + ": " + e.what());
  } catch (const std::bad_alloc& e) {
    throw OutOfMemoryError(where + ": the host is out of memory (" + e.what() +
                           "); fewer workers, a smaller prefetch_factor or a smaller batch_size hold fewer samples at once");
  } catch (const DeviceMismatchError& e) {
    throw DeviceMismatchError(where + ": " + e.what());
  } catch (const IndexError& e) {
    throw IndexError(where + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error(where + ": " + e.what());
  } catch (...) {
    throw Error(where + " with an exception not derived from std::exception");
  }
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  HWARO_CHECK(dataset_ != nullptr, "DataLoader: the data set is null; pass std::make_shared<YourDataset>(...)");
  HWARO_CHECK(options_.batch_size >= 1, "DataLoader: batch_size must be at least 1, but is ", options_.batch_size);
  HWARO_CHECK(options_.num_workers >= 0, "DataLoader: num_workers must be 0 (load on the loop's thread) or more, but is ",
              options_.num_workers);
  HWARO_CHECK(options_.prefetch_factor >= 1, "DataLoader: prefetch_factor must be at least 1, but is ",
              options_.prefetch_factor);
  // As PyTorch's ValueError: with no workers there are no threads to keep, so the option would do nothing.
  HWARO_CHECK(!options_.persistent_workers || options_.num_workers > 0,
              "DataLoader: persistent_workers needs num_workers > 0 (there are no worker threads to keep alive); set "
              "persistent_workers = num_workers > 0");
  if (!options_.collate) options_.collate = default_collate;
  if (!options_.seed) options_.seed = seed_from_default_generator();
  allocator_ = std::make_shared<BatchAllocator>(options_.pin_memory);
  if (options_.num_workers > 0) {
    const auto capacity = static_cast<std::size_t>(options_.prefetch_factor) * static_cast<std::size_t>(options_.num_workers);
    producer_ = std::make_unique<BatchProducer>(
        options_.num_workers, capacity,
        [this](const std::vector<std::size_t>& indices, int worker, const std::function<bool()>& cancelled) {
          std::vector<Example> examples;
          examples.reserve(indices.size());
          for (std::size_t i : indices) {
            if (cancelled()) return std::optional<Batch>{};
            try {
              examples.push_back(dataset_->get(i));
            } catch (...) {
              rethrow_loading_error(detail::str_cat("DataLoader worker ", worker, ": loading sample ", i, " failed"));
            }
          }
          return std::optional<Batch>(options_.collate(examples, *allocator_));
        });
  }
}

DataLoader::~DataLoader() = default;  // producer_'s destructor stops and joins the workers

std::size_t DataLoader::size() const {
  const std::size_t n = dataset_->size();
  const std::size_t full = n / options_.batch_size;  // not (n + batch_size - 1) / ..., which wraps for huge batches
  return options_.drop_last || n % options_.batch_size == 0 ? full : full + 1;
}

std::vector<std::vector<std::size_t>> DataLoader::plan_epoch(std::uint64_t epoch) const {
  std::vector<std::size_t> order(dataset_->size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (options_.shuffle) {
    SampleRng rng = SampleRng::for_sample(*options_.seed, epoch, kShuffleStream);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  }
  std::vector<std::vector<std::size_t>> plan(size());
  for (std::size_t b = 0; b < plan.size(); ++b) {
    const std::size_t start = b * options_.batch_size;
    const std::size_t stop = start + std::min(options_.batch_size, order.size() - start);
    plan[b].assign(order.begin() + static_cast<std::ptrdiff_t>(start), order.begin() + static_cast<std::ptrdiff_t>(stop));
  }
  return plan;
}

DataLoader::iterator DataLoader::begin() {
  if (epoch_open_) end_epoch(epoch_ - 1);
  const std::uint64_t epoch = epoch_++;
  epoch_open_ = true;
  stats_ = {};
  last_return_ns_ = -1;
  auto plan = plan_epoch(epoch);
  if (producer_) {
    producer_->start(std::move(plan), {.seed = *options_.seed, .epoch = epoch});
  } else {
    plan_ = std::move(plan);
    next_ = 0;
  }
  return iterator(this, epoch);
}

Batch DataLoader::load_here(const std::vector<std::size_t>& indices) {
  SampleContextGuard guard({.seed = *options_.seed, .epoch = epoch_ - 1});
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (std::size_t i : indices) {
    try {
      examples.push_back(dataset_->get(i));
    } catch (...) {
      rethrow_loading_error(detail::str_cat("DataLoader: loading sample ", i, " failed"));
    }
  }
  return options_.collate(examples, *allocator_);
}

std::optional<Batch> DataLoader::next_batch() {
  const std::int64_t t0 = now_ns();
  if (last_return_ns_ >= 0) stats_.compute_seconds += static_cast<double>(t0 - last_return_ns_) * 1e-9;
  last_return_ns_ = -1;
  std::optional<Batch> batch;
  if (producer_) {
    batch = producer_->next();
    if (batch) {
      const std::size_t loaded = producer_->batches_loaded();
      stats_.load_seconds_per_batch = loaded ? producer_->load_seconds() / static_cast<double>(loaded) : 0.0;
    }
  } else if (next_ < plan_.size()) {
    batch = load_here(plan_[next_++]);
  }
  if (!batch) return batch;
  const std::int64_t t1 = now_ns();
  stats_.wait_seconds += static_cast<double>(t1 - t0) * 1e-9;
  ++stats_.batches;
  if (!producer_) stats_.load_seconds_per_batch = stats_.wait_seconds / static_cast<double>(stats_.batches);
  last_return_ns_ = t1;
  return batch;
}

void DataLoader::end_epoch(std::uint64_t epoch) {
  if (!epoch_open_ || epoch + 1 != epoch_) return;  // an older epoch's iterator: already ended
  epoch_open_ = false;
  plan_.clear();
  if (producer_) producer_->finish(/*keep_threads=*/options_.persistent_workers);
}

LoaderStats DataLoader::stats() const { return stats_; }

std::size_t DataLoader::worker_threads() const { return producer_ ? producer_->threads_running() : 0; }

// ---- iterator ----

DataLoader::iterator::iterator(DataLoader* loader, std::uint64_t epoch) : loader_(loader), epoch_(epoch) { fetch(); }

DataLoader::iterator::iterator(iterator&& other) noexcept
    : loader_(std::exchange(other.loader_, nullptr)), epoch_(other.epoch_), current_(std::move(other.current_)) {}

DataLoader::iterator& DataLoader::iterator::operator=(iterator&& other) noexcept {
  if (this != &other) {
    if (loader_) loader_->end_epoch(epoch_);
    loader_ = std::exchange(other.loader_, nullptr);
    epoch_ = other.epoch_;
    current_ = std::move(other.current_);
  }
  return *this;
}

DataLoader::iterator::~iterator() {
  if (loader_) loader_->end_epoch(epoch_);  // left the loop early: stop the workers now
}

void DataLoader::iterator::fetch() {
  // A later begin() ended this iterator's epoch; reading on would take the new epoch's batches.
  if (!loader_->epoch_open_ || loader_->epoch_ != epoch_ + 1) {
    loader_ = nullptr;
    current_ = {};
    throw Error(detail::str_cat("DataLoader: this iterator's epoch ", epoch_, " was ended by a later begin(); a "
                                "loader runs one iteration at a time, so finish (or leave) one loop before the next"));
  }
  std::optional<Batch> batch;
  try {
    batch = loader_->next_batch();
  } catch (...) {
    loader_->end_epoch(epoch_);
    loader_ = nullptr;
    throw;
  }
  if (batch) {
    current_ = std::move(*batch);
  } else {
    loader_->end_epoch(epoch_);
    loader_ = nullptr;
    current_ = {};
  }
}

DataLoader::iterator& DataLoader::iterator::operator++() {
  if (loader_) fetch();
  return *this;
}

}  // namespace hwaro::data
