// The CUDA execution model (guide §4.2): streams, StreamGuard, events, synchronize,
// record_stream, and backward on the forward's stream. The GPU cases skip with the reason on a machine without one; the
// no-GPU cases check that every call needing a GPU fails with a clear error instead.
#include <gtest/gtest.h>

#include <random>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

const char* const kNeedsGpu = "needs a GPU, but none is available";

// x * a + b in float64 from x's own values.
std::vector<double> affine_reference(const hw::Tensor& x, double a, double b) {
  std::vector<double> out = hw::test::values_of(x);
  for (double& v : out) v = v * a + b;
  return out;
}

TEST(CudaStreamsWithoutGpu, EveryGpuCallSaysNoGpuIsAvailable) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present; CudaStreamsOnGpu covers this machine";
  using hw::test::throws_with;
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::cuda::synchronize(); }, kNeedsGpu));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::cuda::synchronize(0); }, hw::cuda::unavailable_reason()));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::cuda::set_device(0); }, kNeedsGpu));
  EXPECT_TRUE(throws_with<hw::Error>([] { (void)hw::cuda::current_device(); }, kNeedsGpu));
  EXPECT_TRUE(throws_with<hw::Error>([] { (void)hw::cuda::new_stream(); }, kNeedsGpu));
  EXPECT_TRUE(throws_with<hw::Error>([] { (void)hw::cuda::current_stream(); }, kNeedsGpu));
  EXPECT_TRUE(throws_with<hw::Error>([] { (void)hw::cuda::default_stream(); }, kNeedsGpu));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::cuda::DeviceGuard guard(0); }, kNeedsGpu));
  EXPECT_NO_THROW(hw::cuda::DeviceGuard guard(-1));  // -1 changes nothing, so needs nothing
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::cuda::Event(true).record(); }, kNeedsGpu));
}

TEST(CudaStreamsWithoutGpu, AnUnrecordedEventNeedsNoGpu) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present";
  hw::cuda::Event start(true);
  hw::cuda::Event stop(true);
  EXPECT_FALSE(start.is_recorded());
  EXPECT_TRUE(start.query());  // nothing to wait for, as in PyTorch
  EXPECT_NO_THROW(start.synchronize());
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { (void)start.elapsed_time(stop); }, "must be recorded first"));
}

class CudaStreamsOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason();
  }
  std::uint64_t seed_ = hw::test::fresh_seed();
  std::mt19937_64 rng_{seed_};
  const hw::Device cuda_{"cuda:0"};
};

TEST_F(CudaStreamsOnGpu, StreamGuardMakesItsStreamCurrentAndRestoresTheOldOne) {
  const hw::cuda::Stream original = hw::cuda::current_stream();
  EXPECT_EQ(original, hw::cuda::default_stream());
  const hw::cuda::Stream s = hw::cuda::new_stream();
  EXPECT_NE(s.native_handle(), nullptr);
  EXPECT_EQ(s.device(), 0);
  {
    hw::cuda::StreamGuard guard(s);
    EXPECT_EQ(hw::cuda::current_stream(), s);
    EXPECT_EQ(hw::cuda::current_device(), 0);
  }
  EXPECT_EQ(hw::cuda::current_stream(), original);
}

TEST_F(CudaStreamsOnGpu, OpsUnderAStreamGuardRunOnThatStreamAndGiveTheRightValues) {
  const hw::Tensor x = hw::test::random_tensor({1 << 20}, hw::kFloat32, rng_);
  const hw::cuda::Stream s = hw::cuda::new_stream();
  hw::Tensor y;
  {
    hw::cuda::StreamGuard guard(s);
    const hw::Tensor xd = x.to(cuda_);  // pageable source: synchronous on s
    y = xd * 3.0 + 1.0;
    s.synchronize();
    EXPECT_TRUE(s.query());
    y = y.cpu();
  }
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), affine_reference(x, 3.0, 1.0), 1e-6, 1e-6));
}

TEST_F(CudaStreamsOnGpu, AnEventOrdersWorkAcrossStreams) {
  const hw::Tensor x = hw::test::random_tensor({1 << 22}, hw::kFloat32, rng_);
  const hw::Tensor xd = x.to(cuda_);
  const hw::cuda::Stream producer = hw::cuda::new_stream();
  const hw::cuda::Stream consumer = hw::cuda::new_stream();
  hw::cuda::Event ready;
  hw::Tensor y;
  hw::Tensor z;
  {
    hw::cuda::StreamGuard guard(producer);
    y = xd * 2.0;
    for (int i = 0; i < 10; ++i) y = y * 1.0;  // keep the producer busy for a while
    ready.record();
  }
  {
    hw::cuda::StreamGuard guard(consumer);
    ready.wait();
    z = y + 1.0;
    hw::cuda::record_stream(y, consumer);  // y was made on producer and is read here
  }
  hw::cuda::synchronize();
  EXPECT_TRUE(ready.query());
  EXPECT_TRUE(consumer.query());
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(z.cpu()), affine_reference(x, 2.0, 1.0), 1e-6, 1e-6));
}

TEST_F(CudaStreamsOnGpu, TimingEventsMeasureQueuedWork) {
  const hw::Tensor xd = hw::test::random_tensor({1 << 24}, hw::kFloat32, rng_).to(cuda_);
  hw::cuda::Event start(true);
  hw::cuda::Event stop(true);
  start.record();
  hw::Tensor y = xd;
  for (int i = 0; i < 20; ++i) y = y * 1.0;
  stop.record();
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  const float ms = start.elapsed_time(stop);
  EXPECT_GT(ms, 0.0f);
  hw::cuda::Event untimed;
  untimed.record();
  untimed.synchronize();
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { (void)start.elapsed_time(untimed); }, "enable_timing=true"));
}

TEST_F(CudaStreamsOnGpu, SynchronizeWaitsForEveryStream) {
  const hw::Tensor xd = hw::test::random_tensor({1 << 24}, hw::kFloat32, rng_).to(cuda_);
  const hw::cuda::Stream s = hw::cuda::new_stream(-1, /*priority=*/-1);
  {
    hw::cuda::StreamGuard guard(s);
    hw::Tensor y = xd;
    for (int i = 0; i < 20; ++i) y = y * 1.0;
    hw::cuda::record_stream(xd, s);
  }
  hw::cuda::synchronize(0);
  EXPECT_TRUE(s.query());
  EXPECT_TRUE(hw::cuda::default_stream().query());
}

// PyTorch's stream semantics of backward: the forward runs on a side stream (kept busy), backward
// is called on the default stream with no synchronisation, and the gradient read right after on
// the default stream is the right one, because backward ran each node on the side stream and made
// the caller's stream wait for it (test_autograd_streams checks the same orderings on the CPU).
TEST_F(CudaStreamsOnGpu, BackwardRunsOnTheForwardsStreamAndTheCallerMayReadTheGradientAtOnce) {
  const hw::Tensor x = hw::test::random_tensor({512, 256}, hw::kFloat64, rng_);
  const hw::Tensor w0 = hw::test::random_tensor({256, 128}, hw::kFloat64, rng_);
  hw::Tensor w_cpu = w0.clone().set_requires_grad(true);
  (x.matmul(w_cpu).tanh() * 3.0).sum().backward();

  hw::Tensor w = w0.to(cuda_).set_requires_grad(true);
  const hw::Tensor xd = x.to(cuda_);
  const hw::cuda::Stream side = hw::cuda::new_stream();
  hw::Tensor loss;
  {
    hw::cuda::StreamGuard guard(side);
    // Tens of milliseconds of work queued ahead of the forward and backward on the side stream:
    // a gradient read on the default stream without backward's final wait would be read early.
    const hw::Tensor busy = hw::ones({4096, 4096}, {.dtype = hw::kFloat64, .device = cuda_});
    for (int i = 0; i < 8; ++i) (void)busy.matmul(busy);
    loss = (xd.matmul(w).tanh() * 3.0).sum();
  }
  loss.backward();
  EXPECT_EQ(hw::cuda::current_stream(), hw::cuda::default_stream());
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(w.grad().cpu()), hw::test::values_of(w_cpu.grad()), 1e-10,
                                  1e-10));
}

TEST_F(CudaStreamsOnGpu, BadArgumentsAreClearErrors) {
  using hw::test::throws_with;
  const int n = hw::cuda::device_count();
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { hw::cuda::set_device(n); }, "does not exist"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { (void)hw::cuda::new_stream(n); }, "does not exist"));
  const hw::Tensor cpu = hw::zeros({4});
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::cuda::record_stream(cpu, hw::cuda::current_stream()); },
                                     "expected a CUDA tensor"));
}

}  // namespace
