// DataLoader: every sample once per epoch, order, seeds, errors, early exit, bounded prefetch.
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <set>
#include <thread>

#include "support/test_support.h"

namespace hw = hwaro;
using hw::data::DataLoader;
using hw::data::DataLoaderOptions;

namespace {

// Sample i is {[i, i+0.5], i}; counts its get() calls; can throw at one index or sleep.
class CountingDataset : public hw::data::Dataset {
 public:
  explicit CountingDataset(std::size_t n) : n_(n) {}
  std::size_t size() const override { return n_; }
  hw::data::Example get(std::size_t index) const override {
    calls_.fetch_add(1);
    if (index == throw_at_) throw std::runtime_error("boom");
    if (sleep_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    const float v = static_cast<float>(index);
    return {hw::tensor({v, v + 0.5f}), hw::scalar_tensor(static_cast<std::int64_t>(index))};
  }
  std::size_t n_;
  std::size_t throw_at_ = static_cast<std::size_t>(-1);
  int sleep_us_ = 0;
  mutable std::atomic<std::size_t> calls_{0};
};

// The targets of every batch of one epoch, in order, checking each batch's data against its targets.
std::vector<std::int64_t> run_epoch(DataLoader& loader, std::vector<std::size_t>* batch_sizes = nullptr) {
  std::vector<std::int64_t> seen;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.data.dim(), 2);
    EXPECT_EQ(batch.data.size(1), 2);
    EXPECT_EQ(batch.target.dim(), 1);
    EXPECT_EQ(batch.data.size(0), batch.target.size(0));
    const auto targets = batch.target.to_vector<std::int64_t>();
    const auto data = batch.data.to_vector<float>();
    for (std::size_t j = 0; j < targets.size(); ++j) {
      EXPECT_EQ(data[2 * j], static_cast<float>(targets[j]));
      EXPECT_EQ(data[2 * j + 1], static_cast<float>(targets[j]) + 0.5f);
    }
    if (batch_sizes) batch_sizes->push_back(targets.size());
    seen.insert(seen.end(), targets.begin(), targets.end());
  }
  return seen;
}

}  // namespace

class EverySampleOnce : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {};

TEST_P(EverySampleOnce, PerEpoch) {
  const auto [workers, shuffle, drop_last] = GetParam();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::size_t n = 1 + rng() % 97;
  const std::size_t batch_size = 1 + rng() % 9;
  auto dataset = std::make_shared<CountingDataset>(n);
  DataLoader loader(dataset, {.batch_size = batch_size, .shuffle = shuffle, .num_workers = workers,
                              .drop_last = drop_last, .seed = seed});
  const std::size_t expected_batches = drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
  EXPECT_EQ(loader.size(), expected_batches);
  std::vector<std::int64_t> first_order;
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::size_t> sizes;
    const auto seen = run_epoch(loader, &sizes);
    ASSERT_EQ(sizes.size(), expected_batches);
    for (std::size_t b = 0; b + 1 < sizes.size(); ++b) EXPECT_EQ(sizes[b], batch_size);
    const std::size_t covered = drop_last ? expected_batches * batch_size : n;
    ASSERT_EQ(seen.size(), covered);
    std::vector<int> count(n, 0);
    for (auto t : seen) {
      ASSERT_GE(t, 0);
      ASSERT_LT(t, static_cast<std::int64_t>(n));
      ++count[static_cast<std::size_t>(t)];
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_LE(count[i], 1) << "sample " << i << " seen twice";
    if (!shuffle) {
      for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<std::int64_t>(i));
    }
    if (epoch == 0) first_order = seen;
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, EverySampleOnce,
                         ::testing::Combine(::testing::Values(0, 1, 2, 4), ::testing::Bool(), ::testing::Bool()));

TEST(DataLoader, SameSeedSameOrderForAnyWorkerCount) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  auto dataset = std::make_shared<CountingDataset>(203);
  std::vector<std::vector<std::int64_t>> reference;  // per epoch, from 0 workers
  for (int workers : {0, 1, 2, 4}) {
    DataLoader loader(dataset, {.batch_size = 7, .shuffle = true, .num_workers = workers, .seed = seed});
    for (int epoch = 0; epoch < 3; ++epoch) {
      const auto order = run_epoch(loader);
      if (workers == 0) {
        reference.push_back(order);
      } else {
        EXPECT_EQ(order, reference[static_cast<std::size_t>(epoch)]) << workers << " workers, epoch " << epoch;
      }
    }
  }
  EXPECT_NE(reference[0], reference[1]) << "each epoch must have its own order";
  DataLoader other(dataset, {.batch_size = 7, .shuffle = true, .seed = seed + 1});
  EXPECT_NE(run_epoch(other), reference[0]) << "another seed must give another order";
}

// As PyTorch's DataLoader, which draws its base seed from torch's generator: with no seed given, a
// loader built anew each epoch reshuffles, and hw::manual_seed makes the orders repeat.
TEST(DataLoader, WithoutASeedEachLoaderDrawsOneFromTheDefaultGenerator) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  auto dataset = std::make_shared<CountingDataset>(203);
  const auto orders_of_three_new_loaders = [&] {
    std::vector<std::vector<std::int64_t>> orders;
    for (int epoch = 0; epoch < 3; ++epoch) {
      DataLoader loader(dataset, {.batch_size = 7, .shuffle = true});
      EXPECT_TRUE(loader.options().seed.has_value()) << "options().seed holds the seed drawn";
      orders.push_back(run_epoch(loader));
    }
    return orders;
  };
  hw::manual_seed(seed);
  const auto first = orders_of_three_new_loaders();
  EXPECT_NE(first[0], first[1]) << "a loader built anew must shuffle anew";
  EXPECT_NE(first[1], first[2]) << "a loader built anew must shuffle anew";
  hw::manual_seed(seed);
  EXPECT_EQ(orders_of_three_new_loaders(), first) << "manual_seed must make the drawn seeds repeat";
}

TEST(DataLoader, WorkerExceptionNamesTheSample) {
  for (int workers : {0, 1, 3}) {
    auto dataset = std::make_shared<CountingDataset>(50);
    dataset->throw_at_ = 23;
    DataLoader loader(dataset, {.batch_size = 4, .num_workers = workers});
    std::size_t batches_before = 0;
    EXPECT_TRUE(hw::test::throws_with<hw::Error>(
        [&] {
          for (auto& batch : loader) {
            (void)batch;
            ++batches_before;
          }
        },
        "loading sample 23 failed: boom"))
        << workers << " workers";
    EXPECT_EQ(batches_before, 5u) << "batches 0-4 come before the one holding sample 23";
    // The loader is usable again after the failed epoch.
    dataset->throw_at_ = static_cast<std::size_t>(-1);
    EXPECT_EQ(run_epoch(loader).size(), 50u);
  }
}

TEST(DataLoader, BreakStopsWorkersAtOnce) {
  auto dataset = std::make_shared<CountingDataset>(100000);
  dataset->sleep_us_ = 200;
  DataLoader loader(dataset, {.batch_size = 8, .num_workers = 4, .prefetch_factor = 2});
  const auto t0 = std::chrono::steady_clock::now();
  int batches = 0;
  for (auto& batch : loader) {
    (void)batch;
    if (++batches == 3) break;
  }
  EXPECT_EQ(loader.worker_threads(), 0u) << "non-persistent workers end with the epoch";
  const std::size_t calls_after_break = dataset->calls_.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(dataset->calls_.load(), calls_after_break) << "no get() after the loop was left";
  // Loaded at most what was in flight: 3 consumed + 8 prefetched batches (+ the sample each worker had started).
  EXPECT_LE(calls_after_break, (3u + 8u) * 8u + 4u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(DataLoader, DestroyingMidEpochDoesNotHang) {
  auto dataset = std::make_shared<CountingDataset>(100000);
  dataset->sleep_us_ = 100;
  auto loader = std::make_unique<DataLoader>(dataset, DataLoaderOptions{.batch_size = 4, .num_workers = 2});
  auto it = loader->begin();
  ++it;
  // The iterator outlives nothing here: end the epoch through it, then destroy the loader.
  it = loader->end();
  loader.reset();
  const std::size_t calls = dataset->calls_.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(dataset->calls_.load(), calls);
}

TEST(DataLoader, BoundedPrefetchWithSlowConsumer) {
  for (int workers : {1, 2, 4}) {
    for (int prefetch : {1, 3}) {
      auto dataset = std::make_shared<CountingDataset>(400);
      const std::size_t batch_size = 5;
      DataLoader loader(dataset, {.batch_size = batch_size, .num_workers = workers, .prefetch_factor = prefetch});
      const std::size_t capacity = static_cast<std::size_t>(workers * prefetch);
      std::size_t consumed = 0;
      std::size_t max_ahead = 0;
      for (auto& batch : loader) {
        (void)batch;
        ++consumed;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the slow consumer
        // Batches loaded (or being loaded) but not yet handed to the loop.
        const std::size_t started = (dataset->calls_.load() + batch_size - 1) / batch_size;
        max_ahead = std::max(max_ahead, started - consumed);
      }
      EXPECT_EQ(consumed, 80u);
      EXPECT_LE(max_ahead, capacity) << workers << " workers, prefetch " << prefetch;
      EXPECT_GE(max_ahead, 1u) << "workers should have loaded ahead of a slow consumer";
    }
  }
}

TEST(DataLoader, PersistentWorkersSurviveEpochs) {
  auto dataset = std::make_shared<CountingDataset>(30);
  DataLoader loader(dataset, {.batch_size = 4, .num_workers = 3, .persistent_workers = true});
  for (int epoch = 0; epoch < 3; ++epoch) {
    EXPECT_EQ(run_epoch(loader).size(), 30u);
    EXPECT_EQ(loader.worker_threads(), 3u);
  }
  DataLoader plain(dataset, {.batch_size = 4, .num_workers = 3});
  EXPECT_EQ(run_epoch(plain).size(), 30u);
  EXPECT_EQ(plain.worker_threads(), 0u);
}

TEST(DataLoader, CustomCollate) {
  auto dataset = std::make_shared<CountingDataset>(10);
  DataLoader loader(dataset, {.batch_size = 3, .num_workers = 2,
                              .collate = [](std::vector<hw::data::Example>& examples, hw::data::BatchAllocator&) {
                                // data: the number of examples; target: the sum of the targets.
                                std::int64_t sum = 0;
                                for (auto& e : examples) sum += e.target.item<std::int64_t>();
                                return hw::data::Batch{hw::scalar_tensor(static_cast<std::int64_t>(examples.size())),
                                                       hw::scalar_tensor(sum)};
                              }});
  std::vector<std::int64_t> counts, sums;
  for (auto& batch : loader) {
    counts.push_back(batch.data.item<std::int64_t>());
    sums.push_back(batch.target.item<std::int64_t>());
  }
  EXPECT_EQ(counts, (std::vector<std::int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(sums, (std::vector<std::int64_t>{0 + 1 + 2, 3 + 4 + 5, 6 + 7 + 8, 9}));
}

TEST(DataLoader, PinMemoryWithoutGpuCarriesOnAndReusesBuffers) {
  // With pin_memory the batches come from the loader's BatchAllocator pool, GPU or not (without one
  // its buffers are pageable), and a buffer no batch refers to is handed out again. At most
  // prefetch_factor * num_workers batches are loaded ahead of the loop, besides the batch the loop
  // holds and the one being handed to it, so no more data buffers than that are ever live at once.
  // The collate records each batch's data buffer and the pool's size (data and target buffers);
  // without reuse 4 epochs of 5 batches would make 20 of each.
  auto dataset = std::make_shared<CountingDataset>(40);
  std::mutex mutex;
  std::set<const void*> data_buffers;
  std::size_t most_pooled = 0;
  DataLoaderOptions options{.batch_size = 8, .num_workers = 2, .pin_memory = true};
  options.collate = [&](std::vector<hw::data::Example>& examples, hw::data::BatchAllocator& allocator) {
    hw::data::Batch batch = hw::data::default_collate(examples, allocator);
    std::lock_guard<std::mutex> lock(mutex);
    data_buffers.insert(batch.data.data_ptr());
    most_pooled = std::max(most_pooled, allocator.pooled_buffers());
    return batch;
  };
  DataLoader loader(dataset, options);
  for (int epoch = 0; epoch < 4; ++epoch) EXPECT_EQ(run_epoch(loader).size(), 40u);
  const std::size_t live = static_cast<std::size_t>(options.prefetch_factor * options.num_workers) + 2;
  EXPECT_LE(data_buffers.size(), live);
  EXPECT_LE(most_pooled, 2 * live);
  if (!hw::cuda::is_available()) {
    for (auto& batch : loader) EXPECT_FALSE(batch.data.is_pinned());
  }
}

TEST(DataLoader, BatchAllocatorReusesOnlyUnreferencedBuffers) {
  hw::data::BatchAllocator allocator(/*pin_memory=*/true);
  hw::Tensor a = allocator.empty({4, 3}, hw::kFloat32);
  hw::Tensor b = allocator.empty({4, 3}, hw::kFloat32);
  EXPECT_NE(a.data_ptr(), b.data_ptr()) << "a is still referenced";
  void* a_memory = a.data_ptr();
  hw::Tensor view = a.view({12});
  a = hw::Tensor();
  hw::Tensor c = allocator.empty({4, 3}, hw::kFloat32);
  EXPECT_NE(c.data_ptr(), a_memory) << "a view still refers to a's storage";
  void* c_memory = c.data_ptr();
  view = hw::Tensor();
  c = hw::Tensor();
  hw::Tensor d = allocator.empty({4, 3}, hw::kFloat32);
  EXPECT_TRUE(d.data_ptr() == a_memory || d.data_ptr() == c_memory) << "d must reuse a freed buffer";
  EXPECT_EQ(allocator.pooled_buffers(), 3u);
}

// A reused buffer comes back as a new tensor: requires_grad and a .grad set on an earlier batch
// (gradients of the inputs, as for adversarial examples) must not reach a later batch.
TEST(DataLoader, BatchAllocatorHandsOutAFreshTensorOverAReusedBuffer) {
  hw::data::BatchAllocator allocator(/*pin_memory=*/true);
  hw::Tensor a = allocator.empty({4, 3}, hw::kFloat32).fill_(1.0);
  void* a_memory = a.data_ptr();
  a.requires_grad_(true);
  (a * a).sum().backward();
  ASSERT_TRUE(a.grad().defined());
  a = hw::Tensor();
  const hw::Tensor b = allocator.empty({4, 3}, hw::kFloat32);
  ASSERT_EQ(b.data_ptr(), a_memory) << "the freed buffer is reused";
  EXPECT_FALSE(b.requires_grad());
  EXPECT_FALSE(b.grad().defined());
}

TEST(DataLoader, StatsVerdict) {
  auto dataset = std::make_shared<CountingDataset>(40);
  dataset->sleep_us_ = 2000;
  DataLoader slow_input(dataset, {.batch_size = 4});
  run_epoch(slow_input);
  const auto stats = slow_input.stats();
  EXPECT_EQ(stats.batches, 10u);
  EXPECT_GT(stats.waited_fraction(), 0.5);
  EXPECT_GE(stats.load_seconds_per_batch, 4 * 0.002 * 0.9);
  EXPECT_NE(slow_input.verdict().find("input-bound: the loop waited"), std::string::npos) << slow_input.verdict();
  EXPECT_NE(slow_input.verdict().find("set num_workers > 0"), std::string::npos);

  dataset->sleep_us_ = 0;
  DataLoader slow_loop(dataset, {.batch_size = 4, .num_workers = 1});
  for (auto& batch : slow_loop) {
    (void)batch;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_LT(slow_loop.stats().waited_fraction(), 0.2);
  EXPECT_NE(slow_loop.verdict().find("compute-bound"), std::string::npos) << slow_loop.verdict();
}

TEST(DataLoader, BadOptionsAndShapes) {
  auto dataset = std::make_shared<CountingDataset>(4);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { DataLoader l(dataset, {.batch_size = 0}); }, "batch_size"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { DataLoader l(dataset, {.num_workers = -1}); }, "num_workers"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { DataLoader l(dataset, {.prefetch_factor = 0}); }, "prefetch_factor"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { DataLoader l(nullptr, {}); }, "null"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { DataLoader l(dataset, {.persistent_workers = true}); },
                                               "persistent_workers needs num_workers > 0"));
  std::vector<hw::data::Example> ragged{{hw::zeros({2}), hw::zeros({})}, {hw::zeros({3}), hw::zeros({})}};
  hw::data::BatchAllocator allocator(false);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::default_collate(ragged, allocator); },
                                               "every example must have the same shape"));
}

// Examples with no elements collate to a batch with none: [2, 0] data and [2] targets (under
// UBSan this once reported memcpy from an empty tensor's null pointer).
TEST(DataLoader, EmptyExamplesCollateToAnEmptyBatch) {
  std::vector<hw::data::Example> empty{{hw::zeros({0}), hw::scalar_tensor(3, {.dtype = hw::kInt64})},
                                       {hw::zeros({0}), hw::scalar_tensor(5, {.dtype = hw::kInt64})}};
  hw::data::BatchAllocator allocator(false);
  const hw::data::Batch batch = hw::data::default_collate(empty, allocator);
  EXPECT_EQ(batch.data.sizes(), (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(batch.target.to_vector<std::int64_t>(), (std::vector<std::int64_t>{3, 5}));
}

TEST(DataLoader, AnIteratorWhoseEpochALaterBeginEndedTakesNothingFromTheNewEpoch) {
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    DataLoader loader(std::make_shared<CountingDataset>(10), {.batch_size = 2, .num_workers = workers});
    auto first = loader.begin();
    auto second = loader.begin();
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ++first; }, "was ended by a later begin()"));
    // The new epoch is whole: five batches, every sample once.
    std::vector<std::int64_t> seen;
    for (; second != loader.end(); ++second) {
      const auto targets = second->target.to_vector<std::int64_t>();
      seen.insert(seen.end(), targets.begin(), targets.end());
    }
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  }
}

TEST(DataLoader, ABatchSizeNearTheLargestSizeTGivesOneBatch) {
  // (n + batch_size - 1) / batch_size wraps round for such a batch size and would give none.
  DataLoader loader(std::make_shared<CountingDataset>(10), {.batch_size = static_cast<std::size_t>(-1)});
  EXPECT_EQ(loader.size(), 1u);
  std::vector<std::size_t> sizes;
  EXPECT_EQ(run_epoch(loader, &sizes).size(), 10u);
  EXPECT_EQ(sizes, std::vector<std::size_t>{10});
}

// A data set whose get() throws something that is not a std::exception.
class ThrowsAnInt : public hw::data::Dataset {
 public:
  std::size_t size() const override { return 4; }
  hw::data::Example get(std::size_t) const override { throw 42; }
};

TEST(DataLoader, AnExceptionNotFromStdExceptionStillArrivesAsHwError) {
  for (int workers : {0, 2}) {
    DataLoader loader(std::make_shared<ThrowsAnInt>(), {.batch_size = 2, .num_workers = workers});
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { run_epoch(loader); },
                                                 "failed with an exception not derived from std::exception"))
        << workers << " workers";
  }
}

// Sample i is {[i, i+0.5], i} as CountingDataset's, but get() throws E at index 5.
template <typename E>
class ThrowsAtFive : public hw::data::Dataset {
 public:
  std::size_t size() const override { return 8; }
  hw::data::Example get(std::size_t index) const override {
    if (index == 5) throw E("no such sample");
    const float v = static_cast<float>(index);
    return {hw::tensor({v, v + 0.5f}), hw::scalar_tensor(static_cast<std::int64_t>(index))};
  }
};

// A data set that runs out of host memory at index 5 (std::bad_alloc, Python's MemoryError).
class OutOfHostMemoryAtFive : public hw::data::Dataset {
 public:
  std::size_t size() const override { return 8; }
  hw::data::Example get(std::size_t index) const override {
    if (index == 5) throw std::bad_alloc();
    const float v = static_cast<float>(index);
    return {hw::tensor({v, v + 0.5f}), hw::scalar_tensor(static_cast<std::int64_t>(index))};
  }
};

// std::bad_alloc is the host's out-of-memory: it reaches the loop as hw::OutOfMemoryError naming
// the sample and what to lower, not as a plain hw::Error.
TEST(DataLoader, AHostOutOfMemoryIsAnOutOfMemoryErrorThatSaysWhatToLower) {
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    DataLoader loader(std::make_shared<OutOfHostMemoryAtFive>(), {.batch_size = 2, .num_workers = workers});
    EXPECT_TRUE(hw::test::throws_with<hw::OutOfMemoryError>(
        [&] { run_epoch(loader); }, "loading sample 5 failed: the host is out of memory (std::bad_alloc); fewer workers"));
  }
}

// As PyTorch re-raises a worker's exception as its own type: a data set's hw::IndexError or
// hw::OutOfMemoryError reaches the loop as that type, its message naming the sample.
TEST(DataLoader, ALoadingErrorKeepsItsHwaroErrorType) {
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    DataLoader index_loader(std::make_shared<ThrowsAtFive<hw::IndexError>>(),
                            {.batch_size = 2, .num_workers = workers});
    EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { run_epoch(index_loader); },
                                                      "loading sample 5 failed: no such sample"));
    DataLoader oom_loader(std::make_shared<ThrowsAtFive<hw::OutOfMemoryError>>(),
                          {.batch_size = 2, .num_workers = workers});
    EXPECT_TRUE(hw::test::throws_with<hw::OutOfMemoryError>([&] { run_epoch(oom_loader); },
                                                            "loading sample 5 failed: no such sample"));
  }
}
