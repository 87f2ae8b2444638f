// Pinned memory must not be rewritten while a non_blocking copy from it may still be running.
// The test backend's pinned allocator (testing/test_backend.h) records an event for each copy
// between pinned memory and a test device, and holds those events pending while the test says
// so: a slow GPU copy, seen from the allocator. Checked: the BatchAllocator's pool and the
// pinned block cache reuse a buffer only after its copies' events have completed.
#include <set>

#include "support/test_support.h"
#include "testing/test_backend.h"

namespace hw = hwaro;

namespace {

class PinnedCopyReuse : public ::testing::Test {
 protected:
  void SetUp() override {
    // With a GPU, pin_memory() takes the CUDA backend's pinned memory, not the test backend's.
    if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present: test_pinned_memory covers its pinned memory";
    hw::testing::enable_test_pinned_memory();
    hw::testing::hold_copies(true);
  }
  void TearDown() override {
    hw::testing::complete_copies();
    hw::testing::hold_copies(false);
  }
  const hw::Device device_{hw::DeviceType::Test, 1};
};

TEST_F(PinnedCopyReuse, PinningWorksOnTheTestBackend) {
  EXPECT_TRUE(hw::empty({8}, {.pin_memory = true}).is_pinned());
  EXPECT_TRUE(hw::data::BatchAllocator(true).empty({2, 2}, hw::kFloat32).is_pinned());
}

TEST_F(PinnedCopyReuse, ThePoolWaitsForANonBlockingCopyFromABuffer) {
  hw::data::BatchAllocator allocator(/*pin_memory=*/true);
  hw::Tensor a = allocator.empty({4, 3}, hw::kFloat32).fill_(1.5);
  void* a_memory = a.data_ptr();
  const hw::Tensor on_device = a.to(device_, /*non_blocking=*/true);
  a = hw::Tensor();  // nothing refers to the buffer, but the copy may still read it
  hw::Tensor b = allocator.empty({4, 3}, hw::kFloat32);
  EXPECT_NE(b.data_ptr(), a_memory) << "handed out while a copy from it was pending";
  b = hw::Tensor();
  hw::testing::complete_copies();
  const hw::Tensor c = allocator.empty({4, 3}, hw::kFloat32);
  const hw::Tensor d = allocator.empty({4, 3}, hw::kFloat32);
  EXPECT_TRUE(c.data_ptr() == a_memory || d.data_ptr() == a_memory) << "the copy is done: the buffer is free again";
  EXPECT_EQ(allocator.pooled_buffers(), 2u);
  EXPECT_EQ(hw::test::values_of(on_device), std::vector<double>(12, 1.5));
}

TEST_F(PinnedCopyReuse, ABlockingCopyLeavesNothingPending) {
  hw::data::BatchAllocator allocator(/*pin_memory=*/true);
  hw::Tensor a = allocator.empty({16}, hw::kFloat32).fill_(2.0);
  void* a_memory = a.data_ptr();
  (void)a.to(device_, /*non_blocking=*/false);  // synchronises the stream
  a = hw::Tensor();
  EXPECT_EQ(allocator.empty({16}, hw::kFloat32).data_ptr(), a_memory);
}

TEST_F(PinnedCopyReuse, ACopyIntoAPinnedBufferCountsToo) {
  hw::data::BatchAllocator allocator(/*pin_memory=*/true);
  const hw::Tensor source = hw::full({5}, 3.0, {.device = device_});
  hw::Tensor a = allocator.empty({5}, hw::kFloat32);
  void* a_memory = a.data_ptr();
  a.copy_(source, /*non_blocking=*/true);
  a = hw::Tensor();
  EXPECT_NE(allocator.empty({5}, hw::kFloat32).data_ptr(), a_memory);
  hw::testing::complete_copies();
  EXPECT_EQ(allocator.empty({5}, hw::kFloat32).data_ptr(), a_memory);
}

TEST_F(PinnedCopyReuse, AFreedPinnedTensorsBlockWaitsForItsCopy) {
  void* first = nullptr;
  hw::Tensor on_device;
  {
    const hw::Tensor p = hw::empty({1000}, {.pin_memory = true});
    first = p.data_ptr();
    on_device = p.to(device_, /*non_blocking=*/true);
  }
  hw::Tensor second = hw::empty({1000}, {.pin_memory = true});  // the same size class
  EXPECT_NE(second.data_ptr(), first) << "a freed block was reused before its copy finished";
  second = hw::Tensor();
  hw::testing::complete_copies();
  const hw::Tensor x = hw::empty({1000}, {.pin_memory = true});
  const hw::Tensor y = hw::empty({1000}, {.pin_memory = true});
  EXPECT_TRUE(x.data_ptr() == first || y.data_ptr() == first) << "the copy is done: the block is free again";
}

TEST_F(PinnedCopyReuse, ALoaderNeverRefillsABatchWhoseCopyIsPending) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const hw::Tensor data = hw::test::random_tensor({48, 6}, hw::kFloat32, rng);
  const hw::Tensor target = hw::arange(48);
  auto dataset = std::make_shared<hw::data::TensorDataset>(data, target);
  hw::data::DataLoader loader(dataset, {.batch_size = 4, .num_workers = 2, .pin_memory = true});
  std::set<void*> host_buffers;
  std::vector<hw::Tensor> copies;
  for (auto& batch : loader) {
    ASSERT_TRUE(batch.data.is_pinned());
    host_buffers.insert(batch.data.data_ptr());
    copies.push_back(batch.data.to(device_, /*non_blocking=*/true));
  }
  EXPECT_EQ(host_buffers.size(), 12u) << "a buffer was refilled while its copy was pending";
  const std::vector<double> all = hw::test::values_of(data);
  for (std::size_t b = 0; b < copies.size(); ++b) {
    const std::vector<double> expected(all.begin() + static_cast<std::ptrdiff_t>(b * 24),
                                       all.begin() + static_cast<std::ptrdiff_t>((b + 1) * 24));
    EXPECT_EQ(hw::test::values_of(copies[b]), expected) << "batch " << b;
  }
  hw::testing::complete_copies();
  hw::testing::hold_copies(false);
  std::set<void*> reused;
  for (auto& batch : loader) {
    reused.insert(batch.data.data_ptr());
    (void)batch.data.to(device_, /*non_blocking=*/true);
  }
  EXPECT_LT(reused.size(), 12u) << "with copies done at once the pool should recycle buffers";
}

}  // namespace
