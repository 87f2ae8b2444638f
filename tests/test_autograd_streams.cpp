// Backward's stream semantics (PyTorch's): each node runs on the stream its forward ran on, a
// gradient handed from one stream to another is ordered and its block recorded on the user, and
// the caller's stream waits for every stream backward ran on. Checked on the test device's fake
// streams, which log every launch with its stream and every ordering asked of the backend; the
// same on a real GPU is in test_cuda_streams.
#include <algorithm>
#include <cmath>

#include "support/test_support.h"
#include "testing/test_backend.h"

namespace hwaro::test {
namespace {

using testing::StreamCall;

constexpr int kIndex = 2;
const Device kDevice(kTestDevice, kIndex);
void* const kSide = reinterpret_cast<void*>(0x51);   // fake stream handles
void* const kOther = reinterpret_cast<void*>(0x52);

bool has_wait(const testing::StreamLog& log, void* producer, void* waiter) {
  return std::any_of(log.calls.begin(), log.calls.end(), [&](const StreamCall& c) {
    return c.kind == StreamCall::Kind::Wait && c.device == kIndex && c.what == producer && c.stream == waiter;
  });
}

bool has_record_on(const testing::StreamLog& log, void* stream) {
  return std::any_of(log.calls.begin(), log.calls.end(), [&](const StreamCall& c) {
    return c.kind == StreamCall::Kind::RecordStream && c.device == kIndex && c.stream == stream;
  });
}

// Runs fn with `stream` current on the test device, then the default stream again.
template <typename F> auto on_stream(void* stream, F&& fn) {
  testing::set_current_stream(kIndex, stream);
  auto result = fn();
  testing::set_current_stream(kIndex, nullptr);
  return result;
}

class AutogradStreams : public ::testing::Test {
 protected:
  void SetUp() override { testing::enable_test_backend(); }
};

TEST_F(AutogradStreams, BackwardRunsOnTheForwardsStreamAndTheCallerWaitsForIt) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor w_cpu = random_tensor({4, 3}, kFloat64, rng), x_cpu = random_tensor({5, 4}, kFloat64, rng);
  Tensor w = w_cpu.to(kDevice).set_requires_grad(true);
  const Tensor x = x_cpu.to(kDevice);
  const Tensor loss = on_stream(kSide, [&] { return x.matmul(w).relu().sum(); });
  const Tensor seed = ones_like(loss);  // made on the caller's (default) stream

  testing::start_stream_log();
  autograd::backward({loss}, {seed});
  const testing::StreamLog log = testing::take_stream_log();

  ASSERT_FALSE(log.launches.empty());
  for (const testing::LaunchRecord& l : log.launches) {
    EXPECT_EQ(l.stream, kSide) << op_name(l.op) << " ran on another stream";
  }
  // The seed, made on the default stream, is used on the side stream: ordered and recorded there.
  EXPECT_TRUE(has_wait(log, nullptr, kSide));
  EXPECT_TRUE(has_record_on(log, kSide));
  // Last, the caller's stream waits for the side stream, so it may read w.grad at once.
  ASSERT_FALSE(log.calls.empty());
  EXPECT_EQ(log.calls.back().kind, StreamCall::Kind::Wait);
  EXPECT_EQ(log.calls.back().what, kSide);
  EXPECT_EQ(log.calls.back().stream, nullptr);

  // The caller's stream is current again, and the gradient is right: x^T (relu'(x w)).
  testing::start_stream_log();
  const Tensor grad = (w.grad() * 1.0).cpu();
  const testing::StreamLog after = testing::take_stream_log();
  ASSERT_FALSE(after.launches.empty());
  EXPECT_EQ(after.launches.back().stream, nullptr);
  const std::vector<double> xs = values_of(x_cpu), ws = values_of(w_cpu);
  std::vector<double> want(12, 0.0);
  for (int n = 0; n < 5; ++n) {
    for (int j = 0; j < 3; ++j) {
      double y = 0;
      for (int k = 0; k < 4; ++k) y += xs[n * 4 + k] * ws[k * 3 + j];
      if (y <= 0) continue;
      for (int k = 0; k < 4; ++k) want[k * 3 + j] += xs[n * 4 + k];
    }
  }
  EXPECT_TRUE(all_close(values_of(grad), want, 1e-12, 1e-12));
}

TEST_F(AutogradStreams, BranchesOnTwoStreamsJoinInOrder) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor x_cpu = random_tensor({6}, kFloat64, rng);
  Tensor x = x_cpu.to(kDevice).set_requires_grad(true);
  const Tensor a = on_stream(kSide, [&] { return x * 2.0; });
  const Tensor b = on_stream(kOther, [&] { return x.exp(); });
  const Tensor z = (a * b).sum();  // on the default stream
  const Tensor seed = ones_like(z);

  testing::start_stream_log();
  autograd::backward({z}, {seed});
  const testing::StreamLog log = testing::take_stream_log();

  const auto ran_on = [&](void* stream) {
    return std::any_of(log.launches.begin(), log.launches.end(),
                       [&](const testing::LaunchRecord& l) { return l.stream == stream; });
  };
  EXPECT_TRUE(ran_on(nullptr));  // z's sum and product
  EXPECT_TRUE(ran_on(kSide));    // a's gradient
  EXPECT_TRUE(ran_on(kOther));   // b's gradient
  // Each branch waits for the default stream's gradient; x's two parts are summed on one
  // stream after waiting for the other; the caller waits for both branches.
  EXPECT_TRUE(has_wait(log, nullptr, kSide));
  EXPECT_TRUE(has_wait(log, nullptr, kOther));
  EXPECT_TRUE(has_wait(log, kSide, kOther) || has_wait(log, kOther, kSide));
  EXPECT_TRUE(has_wait(log, kSide, nullptr));
  EXPECT_TRUE(has_wait(log, kOther, nullptr));

  // d/dx sum(2x e^x) = 2 e^x (1 + x)
  std::vector<double> want = values_of(x_cpu);
  for (double& v : want) v = 2 * std::exp(v) * (1 + v);
  EXPECT_TRUE(all_close(values_of(x.grad()), want, 1e-12, 1e-12));
}

TEST_F(AutogradStreams, OneStreamAsksForNoOrdering) {
  Tensor x = randn({8}, {.dtype = kFloat64}).to(kDevice).set_requires_grad(true);
  const Tensor loss = (x * x).sum();
  testing::start_stream_log();
  loss.backward();
  const testing::StreamLog log = testing::take_stream_log();
  EXPECT_TRUE(log.calls.empty());
  EXPECT_FALSE(log.launches.empty());
}

// A backward that fails partway still orders the caller's stream after the nodes that ran: a
// leaf may already hold their gradients.
TEST_F(AutogradStreams, ABackwardThatFailsPartwayStillOrdersTheCallersStream) {
  Tensor w = randn({4, 3}, {.dtype = kFloat64}).to(kDevice).set_requires_grad(true);
  const Tensor x = randn({5, 4}, {.dtype = kFloat64}).to(kDevice);
  Tensor hidden;
  const Tensor loss = on_stream(kSide, [&] {
    hidden = x.matmul(w).relu();
    return hidden.sum();
  });
  hidden.grad_fn()->add_pre_hook([](const Tensor&) { throw Error("the hook failed on purpose"); });
  testing::start_stream_log();
  EXPECT_TRUE(throws_with<Error>([&] { loss.backward(); }, "the hook failed on purpose"));
  const testing::StreamLog log = testing::take_stream_log();
  EXPECT_FALSE(log.launches.empty()) << "sum's backward ran before the failing node";
  ASSERT_FALSE(log.calls.empty());
  EXPECT_EQ(log.calls.back().kind, StreamCall::Kind::Wait);
  EXPECT_EQ(log.calls.back().what, kSide);
  EXPECT_EQ(log.calls.back().stream, nullptr);
}

}  // namespace
}  // namespace hwaro::test
