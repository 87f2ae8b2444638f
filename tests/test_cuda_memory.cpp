// The VRAM functions of Dev Tip 2. Without a GPU they must answer cleanly (zeros, a summary
// that says why); with one, they must follow a tensor's life through the caching allocator.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

TEST(CudaMemoryWithoutGpu, ReportsZerosAndSaysWhy) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present; CudaMemoryOnGpu covers this machine";
  EXPECT_EQ(hw::cuda::memory_allocated(), 0u);
  EXPECT_EQ(hw::cuda::memory_reserved(), 0u);
  EXPECT_EQ(hw::cuda::max_memory_allocated(), 0u);
  EXPECT_EQ(hw::cuda::max_memory_reserved(0), 0u);
  EXPECT_NO_THROW(hw::cuda::empty_cache());
  EXPECT_NO_THROW(hw::cuda::reset_peak_memory_stats());
  const std::string summary = hw::cuda::memory_summary();
  EXPECT_NE(summary.find("no CUDA memory to summarise: "), std::string::npos) << summary;
  EXPECT_NE(summary.find(hw::cuda::unavailable_reason()), std::string::npos) << summary;
}

TEST(CudaMemoryOnGpu, FollowsATensorThroughTheCache) {
  if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason();
  const char* mode = std::getenv("HWARO_CUDA_ALLOC");
  if (mode != nullptr && std::string_view(mode) == "native") {
    // gpu-check.sh's memcheck pass: every tensor is its own cudaMalloc, and there is no cache to follow.
    const hw::Tensor t = hw::empty({1024}, {.device = hw::Device("cuda:0")});
    EXPECT_EQ(hw::cuda::memory_allocated(0), 0u);
    EXPECT_NE(hw::cuda::memory_summary(0).find("HWARO_CUDA_ALLOC=native"), std::string::npos);
    return;
  }
  hw::cuda::empty_cache();
  const std::size_t before = hw::cuda::memory_allocated(0);
  const std::size_t bytes = std::size_t{64} << 20;
  {
    const hw::Tensor t = hw::empty({static_cast<std::int64_t>(bytes / 4)}, {.device = hw::Device("cuda:0")});
    EXPECT_GE(hw::cuda::memory_allocated(0), before + bytes);
    EXPECT_GE(hw::cuda::memory_reserved(0), hw::cuda::memory_allocated(0));
    EXPECT_GE(hw::cuda::max_memory_allocated(0), before + bytes);
  }
  EXPECT_EQ(hw::cuda::memory_allocated(0), before);
  EXPECT_GE(hw::cuda::memory_reserved(0), bytes);  // cached for reuse, not returned
  hw::cuda::empty_cache();
  EXPECT_LT(hw::cuda::memory_reserved(0), bytes);
  hw::cuda::reset_peak_memory_stats(0);
  EXPECT_EQ(hw::cuda::max_memory_allocated(0), hw::cuda::memory_allocated(0));
  EXPECT_NE(hw::cuda::memory_summary(0).find("cuda:0"), std::string::npos);
}

}  // namespace
