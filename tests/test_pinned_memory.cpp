// Pinned (page-locked) host memory: pin_memory(), TensorOptions.pin_memory and the
// non_blocking copies they allow. Without a GPU, pinning gives a pageable copy and warns
// once (as PyTorch does); with one, the caching pinned allocator is checked.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

TEST(PinnedMemoryWithoutGpu, PinningGivesAPageableCopyAndWarnsOnce) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present; PinnedMemoryOnGpu covers this machine";
  std::mt19937_64 rng(hw::test::fresh_seed());
  const hw::Tensor x = hw::test::random_tensor({3, 5}, hw::kFloat32, rng);
  ::testing::internal::CaptureStderr();
  const hw::Tensor pinned = x.pin_memory();
  const hw::Tensor made = hw::zeros({4}, {.pin_memory = true});
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(pinned.is_pinned());
  EXPECT_FALSE(made.is_pinned());
  EXPECT_EQ(hw::test::values_of(pinned), hw::test::values_of(x));
  const std::string needle = "pinned memory was requested but no GPU is available";
  const std::size_t first = warnings.find(needle);
  EXPECT_NE(first, std::string::npos) << warnings;
  EXPECT_EQ(warnings.find(needle, first + 1), std::string::npos) << "warned more than once: " << warnings;
}

class PinnedMemoryOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason();
  }
  std::mt19937_64 rng_{hw::test::fresh_seed()};
  const hw::Device cuda_{"cuda:0"};
};

TEST_F(PinnedMemoryOnGpu, PinMemoryCopiesIntoPageLockedMemory) {
  const hw::Tensor x = hw::test::random_tensor({7, 9}, hw::kFloat64, rng_);
  EXPECT_FALSE(x.is_pinned());
  const hw::Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_FALSE(p.is_same(x));
  EXPECT_EQ(hw::test::values_of(p), hw::test::values_of(x));
  EXPECT_TRUE(p.pin_memory().is_same(p));  // already pinned: the same tensor
  EXPECT_TRUE(hw::empty({3}, {.pin_memory = true}).is_pinned());
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { (void)x.to(cuda_).pin_memory(); }, "only CPU tensors"));
}

TEST_F(PinnedMemoryOnGpu, NonBlockingRoundTripsThroughPinnedMemoryAreExact) {
  const hw::cuda::Stream s = hw::cuda::new_stream();
  const hw::Tensor x = hw::test::random_tensor({1 << 20}, hw::kFloat32, rng_).pin_memory();
  hw::Tensor back = hw::empty({1 << 20}, {.pin_memory = true});
  {
    hw::cuda::StreamGuard guard(s);
    const hw::Tensor d = x.to(cuda_, /*non_blocking=*/true);
    back.copy_(d * 2.0, /*non_blocking=*/true);
    s.synchronize();
  }
  std::vector<double> expected = hw::test::values_of(x);
  for (double& v : expected) v *= 2.0;
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(back), expected, 0.0, 0.0));
}

TEST_F(PinnedMemoryOnGpu, PageableNonBlockingCopiesAreStillCorrect) {
  const hw::Tensor x = hw::test::random_tensor({1 << 18}, hw::kFloat32, rng_);
  const hw::Tensor d = x.to(cuda_, /*non_blocking=*/true);  // pageable: done synchronously
  EXPECT_EQ(hw::test::values_of(d.cpu()), hw::test::values_of(x));
}

TEST_F(PinnedMemoryOnGpu, AFreedPinnedBlockIsReusedOnceItsCopiesHaveFinished) {
  void* first = nullptr;
  {
    const hw::Tensor p = hw::empty({1000}, {.pin_memory = true});
    first = p.data_ptr();
    const hw::Tensor d = p.to(cuda_, /*non_blocking=*/true);
    hw::cuda::synchronize();
  }
  const hw::Tensor again = hw::empty({1000}, {.pin_memory = true});  // same size class (4096 bytes)
  EXPECT_EQ(again.data_ptr(), first);
}

}  // namespace
