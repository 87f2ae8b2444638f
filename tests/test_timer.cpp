// hw::Timer: a host clock that synchronises the devices it measures. On the CPU it is a
// steady clock; with a GPU, stop() must not return before the queued work has finished.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

TEST(Timer, OnTheCpuMeasuresAtLeastTheTimeThatPassed) {
  hw::Timer timer(hw::Device("cpu"));
  EXPECT_TRUE(timer.devices().empty());  // nothing to synchronise
  timer.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double ms = timer.stop();
  EXPECT_GE(ms, 20.0);
  EXPECT_EQ(ms, timer.elapsed_ms());
}

TEST(Timer, MisuseIsAClearError) {
  using hw::test::throws_with;
  hw::Timer timer(hw::Device("cpu"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { (void)timer.stop(); }, "before start()"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { (void)timer.elapsed_ms(); }, "not been started"));
  timer.start();
  EXPECT_TRUE(throws_with<hw::Error>([&] { (void)timer.elapsed_ms(); }, "not been stopped"));
}

TEST(Timer, ACudaDeviceWithoutAGpuIsAClearErrorAtConstruction) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present";
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::Timer timer(hw::Device("cuda")); }, "no cuda device is available"));
  const hw::Timer all;  // every available accelerator: no CUDA device here
  for (const hw::Device& d : all.devices()) EXPECT_FALSE(d.is_cuda()) << d;
}

TEST(Timer, OnAGpuStopWaitsForTheQueuedWork) {
  if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason();
  std::mt19937_64 rng(hw::test::fresh_seed());
  const hw::Tensor xd = hw::test::random_tensor({1 << 24}, hw::kFloat32, rng).to(hw::Device("cuda:0"));
  hw::Timer timer(hw::Device("cuda:0"));
  ASSERT_EQ(timer.devices().size(), 1u);
  hw::cuda::Event done;
  timer.start();
  hw::Tensor y = xd;
  for (int i = 0; i < 20; ++i) y = y * 1.0;
  done.record();
  const double ms = timer.stop();
  EXPECT_TRUE(done.query());  // stop() synchronised, so the work is finished
  EXPECT_GT(ms, 0.0);
}

}  // namespace
