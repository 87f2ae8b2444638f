// DevicePrefetcher on the test backend's device "test:2" and on the CPU (the pass-through),
// and on a GPU where there is one: the same batches as the loader, in order, on the device;
// early exit and a new epoch; a worker's error reaching the loop; no GPU is a clear error.
#include "support/test_support.h"
#include "testing/test_backend.h"

namespace hw = hwaro;
using hw::data::DataLoader;
using hw::data::DevicePrefetcher;

namespace {

class PrefetcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hw::testing::enable_test_backend();
    seed_ = hw::test::fresh_seed();
    rng_.seed(seed_);
    data_ = hw::test::random_tensor({50, 3, 4}, hw::kFloat32, rng_);
    targets_ = hw::test::random_tensor({50}, hw::kInt64, rng_, 0, 9);
    dataset_ = std::make_shared<hw::data::TensorDataset>(data_, targets_);
  }
  using Batches = std::vector<std::pair<std::vector<double>, std::vector<double>>>;
  // The host batches of two epochs of a loader with these options (a shuffle differs by epoch).
  std::vector<Batches> reference(const hw::data::DataLoaderOptions& o) {
    DataLoader loader(dataset_, o);
    std::vector<Batches> out(2);
    for (Batches& epoch : out) {
      for (auto& batch : loader) epoch.emplace_back(hw::test::values_of(batch.data), hw::test::values_of(batch.target));
    }
    return out;
  }
  void expect_same_batches(const hw::Device& device, const hw::data::DataLoaderOptions& options) {
    const auto epochs = reference(options);
    DataLoader loader(dataset_, options);
    DevicePrefetcher prefetcher(loader, device);
    EXPECT_EQ(prefetcher.size(), epochs[0].size());
    for (int epoch = 0; epoch < 2; ++epoch) {
      const Batches& expected = epochs[static_cast<std::size_t>(epoch)];
      std::size_t k = 0;
      for (auto& batch : prefetcher) {
        ASSERT_LT(k, expected.size());
        EXPECT_EQ(batch.data.device(), device);
        EXPECT_EQ(batch.target.device(), device);
        EXPECT_EQ(batch.data.dtype(), hw::kFloat32);
        EXPECT_EQ(hw::test::values_of(batch.data), expected[k].first) << "batch " << k;
        EXPECT_EQ(hw::test::values_of(batch.target), expected[k].second) << "batch " << k;
        ++k;
      }
      EXPECT_EQ(k, expected.size()) << "epoch " << epoch;
    }
  }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  hw::Tensor data_, targets_;
  std::shared_ptr<hw::data::TensorDataset> dataset_;
};

TEST_F(PrefetcherTest, ATestDeviceGetsTheLoadersBatchesInOrder) {
  SCOPED_TRACE(seed_);
  for (int workers : {0, 2}) {
    expect_same_batches(hw::Device(hw::DeviceType::Test, 2),
                        {.batch_size = 8, .shuffle = true, .num_workers = workers, .seed = seed_});
  }
}

TEST_F(PrefetcherTest, OnTheCpuItIsAPassThrough) {
  SCOPED_TRACE(seed_);
  expect_same_batches(hw::Device(hw::DeviceType::CPU), {.batch_size = 7, .num_workers = 1, .drop_last = true});
}

TEST_F(PrefetcherTest, BreakingOutThenStartingAgainGivesAFullEpoch) {
  DataLoader loader(dataset_, {.batch_size = 10, .num_workers = 2});
  DevicePrefetcher prefetcher(loader, hw::Device(hw::DeviceType::Test, 0));
  for (auto& batch : prefetcher) {
    (void)batch;
    break;
  }
  std::vector<double> targets;
  for (auto& batch : prefetcher) {
    const auto v = hw::test::values_of(batch.target);
    targets.insert(targets.end(), v.begin(), v.end());
  }
  EXPECT_EQ(targets, hw::test::values_of(targets_));
}

// As the loader's own loop: leaving the prefetcher's loop early stops the loader's workers at once,
// though the prefetcher lives on (a member of a trainer, say).
TEST_F(PrefetcherTest, BreakingOutStopsTheLoadersWorkers) {
  DataLoader loader(dataset_, {.batch_size = 2, .num_workers = 2});
  DevicePrefetcher prefetcher(loader, hw::Device(hw::DeviceType::Test, 0));
  for (auto& batch : prefetcher) {
    (void)batch;
    EXPECT_GT(loader.worker_threads(), 0u);
    break;
  }
  EXPECT_EQ(loader.worker_threads(), 0u);
}

// A custom collate's batch without a target (unlabelled data) passes with none.
TEST_F(PrefetcherTest, ABatchWithoutATargetKeepsNone) {
  DataLoader loader(dataset_, {.batch_size = 10, .collate = [](std::vector<hw::data::Example>& examples,
                                                              hw::data::BatchAllocator&) {
                                 std::vector<hw::Tensor> rows;
                                 for (auto& e : examples) rows.push_back(e.data);
                                 return hw::data::Batch{hw::stack(rows, 0), hw::Tensor()};
                               }});
  DevicePrefetcher prefetcher(loader, hw::Device(hw::DeviceType::Test, 0));
  std::size_t batches = 0;
  for (auto& batch : prefetcher) {
    EXPECT_EQ(batch.data.device(), hw::Device(hw::DeviceType::Test, 0));
    EXPECT_FALSE(batch.target.defined());
    ++batches;
  }
  EXPECT_EQ(batches, 5u);
}

// Examples already on a device are collated there, as PyTorch's default_collate keeps them.
TEST_F(PrefetcherTest, ExamplesOnADeviceAreCollatedThere) {
  const hw::Device device(hw::DeviceType::Test, 1);
  DataLoader loader(std::make_shared<hw::data::TensorDataset>(data_.to(device), targets_.to(device)),
                    {.batch_size = 10});
  std::vector<double> targets;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.data.device(), device);
    EXPECT_EQ(batch.target.device(), device);
    const auto v = hw::test::values_of(batch.target);
    targets.insert(targets.end(), v.begin(), v.end());
  }
  EXPECT_EQ(targets, hw::test::values_of(targets_));
}

TEST_F(PrefetcherTest, AnIteratorWhoseEpochALaterBeginEndedTakesNothingFromTheNewEpoch) {
  DataLoader loader(dataset_, {.batch_size = 10});
  DevicePrefetcher prefetcher(loader, hw::Device(hw::DeviceType::CPU));
  auto first = prefetcher.begin();
  auto second = prefetcher.begin();
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ++first; }, "was ended by a later begin()"));
  std::vector<double> targets;
  for (; second != prefetcher.end(); ++second) {
    const auto v = hw::test::values_of(second->target);
    targets.insert(targets.end(), v.begin(), v.end());
  }
  EXPECT_EQ(targets, hw::test::values_of(targets_)) << "the new epoch is whole";
}

class FailingAt : public hw::data::Dataset {
 public:
  std::size_t size() const override { return 20; }
  hw::data::Example get(std::size_t index) const override {
    if (index == 13) throw std::runtime_error("bad sample");
    return {hw::full({2}, static_cast<double>(index)), hw::scalar_tensor(static_cast<std::int64_t>(index))};
  }
};

TEST_F(PrefetcherTest, ALoadingErrorReachesTheLoopWhenItsBatchIsDue) {
  DataLoader loader(std::make_shared<FailingAt>(), {.batch_size = 4, .num_workers = 2});
  DevicePrefetcher prefetcher(loader, hw::Device(hw::DeviceType::Test, 1));
  std::vector<std::int64_t> firsts;
  try {
    for (auto& batch : prefetcher) firsts.push_back(batch.target.cpu().to_vector<std::int64_t>()[0]);
    FAIL() << "the error of sample 13 did not arrive";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("13"), std::string::npos) << e.what();
  }
  EXPECT_EQ(firsts, (std::vector<std::int64_t>{0, 4, 8})) << "batches before the failing one are all delivered";
}

// A failed copy (the device out of memory) is the failing batch's error: the batches before it
// all reach the loop, and no batch after it. Each batch's copy makes two allocations (data and
// target), so the 5th is batch 2's data; test:3 is used by no other case.
TEST_F(PrefetcherTest, ACopyErrorReachesTheLoopWhenItsBatchIsDue) {
  for (int workers : {0, 2}) {
    SCOPED_TRACE(workers);
    DataLoader loader(dataset_, {.batch_size = 5, .num_workers = workers});
    DevicePrefetcher prefetcher(loader, hw::Device(hw::DeviceType::Test, 3));
    hw::testing::fail_allocation(3, 5);
    std::vector<std::int64_t> batches;  // the first target of each batch delivered
    try {
      for (auto& batch : prefetcher) batches.push_back(batch.target.cpu().to_vector<std::int64_t>()[0]);
      ADD_FAILURE() << "the failed copy did not reach the loop";
    } catch (const hw::OutOfMemoryError& e) {
      EXPECT_NE(std::string(e.what()).find("test:3 out of memory"), std::string::npos) << e.what();
    }
    const std::vector<std::int64_t> targets = targets_.to_vector<std::int64_t>();
    EXPECT_EQ(batches, (std::vector<std::int64_t>{targets[0], targets[5]}))
        << "batches 0 and 1 were copied and must be delivered";
    std::size_t next_epoch = 0;
    for (auto& batch : prefetcher) next_epoch += static_cast<std::size_t>(batch.data.size(0));
    EXPECT_EQ(next_epoch, 50U) << "the next epoch starts afresh";
  }
}

TEST_F(PrefetcherTest, ACudaDeviceWithoutAGpuIsAClearError) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present";
  DataLoader loader(dataset_, {.batch_size = 4});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { DevicePrefetcher p(loader, hw::Device("cuda")); },
                                               "DevicePrefetcher: cuda needs a GPU"));
}

TEST_F(PrefetcherTest, OnAGpuBatchesArriveOnItFromPinnedMemory) {
  if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason();
  SCOPED_TRACE(seed_);
  expect_same_batches(hw::Device("cuda:0"), {.batch_size = 8, .shuffle = true, .num_workers = 2,
                                             .pin_memory = true, .seed = seed_});
}

}  // namespace
