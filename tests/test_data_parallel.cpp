// hw::nn::DataParallel over the CPU and the test backend's devices: outputs and gradients equal
// a float64 copy of the plain module run on the whole batch (2 and 3 devices, uneven batches),
// replicas follow optimiser steps without being rebuilt, PyTorch's buffer rule, one device is
// transparent, and each wrong use is a clear error.
#include <atomic>
#include <cmath>
#include <thread>

#include "support/test_support.h"
#include "testing/test_backend.h"

namespace hwaro::test {
namespace {

namespace nn = hwaro::nn;

class DataParallelTest : public ::testing::Test {
 protected:
  void SetUp() override { hwaro::testing::enable_test_backend(); }
};

Device test_device(int i) { return Device(DeviceType::Test, i); }

nn::Sequential make_mlp() { return nn::Sequential(nn::Linear(6, 10), nn::GELU(), nn::Linear(10, 3)); }

// A float64 copy of `module` with its current values: the reference.
std::shared_ptr<nn::Module> float64_copy(const nn::Module& module) {
  std::shared_ptr<nn::Module> copy = module.clone_module();
  copy->load_state_dict(module.state_dict());
  copy->to(kFloat64);
  return copy;
}

// sum(out * weights): a loss whose gradient differs for every output element.
Tensor weighted_sum(const Tensor& out, const Tensor& weights) { return (out * weights.to(out.dtype())).sum(); }

void expect_grads_match(const nn::Module& module, const nn::Module& reference) {
  const auto got = module.named_parameters(), want = reference.named_parameters();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].first);
    ASSERT_TRUE(got[i].second.grad().defined());
    EXPECT_TRUE(all_close(values_of(got[i].second.grad()), values_of(want[i].second.grad()), 1e-4, 1e-5));
  }
}

void check_one_step_matches_reference(const std::vector<Device>& devices, std::int64_t rows) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  nn::Sequential mlp = make_mlp();
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  nn::DataParallel dp(mlp, devices);
  const Tensor x = random_tensor({rows, 6}, kFloat32, rng);
  const Tensor weights = random_tensor({rows, 3}, kFloat32, rng);

  const Tensor out = dp->forward(x);
  EXPECT_EQ(out.device(), devices[0]);
  EXPECT_EQ(out.sizes(), (std::vector<std::int64_t>{rows, 3}));
  weighted_sum(out, weights).backward();

  const Tensor expected = reference->forward(x.to(kFloat64));
  weighted_sum(expected, weights).backward();
  EXPECT_TRUE(all_close(values_of(out), values_of(expected), 1e-4, 1e-5));
  expect_grads_match(*mlp, *reference);
  // Gradients land in the original only: the replicas' own parameters get none.
  for (std::size_t i = 1; i < devices.size(); ++i) {
    for (const Tensor& p : dp->replica(i)->parameters()) EXPECT_FALSE(p.grad().defined());
  }
}

TEST_F(DataParallelTest, TwoDevicesGiveTheWholeBatchGradients) {
  check_one_step_matches_reference({Device("cpu"), test_device(1)}, 16);
}

TEST_F(DataParallelTest, ThreeDevicesGiveTheWholeBatchGradients) {
  check_one_step_matches_reference({Device("cpu"), test_device(1), test_device(2)}, 18);
}

TEST_F(DataParallelTest, StartsOnATestDeviceAndSpreadsOverCpuDevicesToo) {
  check_one_step_matches_reference({Device("cpu"), Device("cpu"), Device("cpu")}, 9);
  // The original may itself live on a non-CPU device.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  nn::Sequential mlp = make_mlp();
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  mlp->to(test_device(0));
  nn::DataParallel dp(mlp, {test_device(0), test_device(3)});
  const Tensor x = random_tensor({5, 6}, kFloat32, rng);
  const Tensor out = dp->forward(x);
  EXPECT_EQ(out.device(), test_device(0));
  out.sum().backward();
  reference->forward(x.to(kFloat64)).sum().backward();
  expect_grads_match(*mlp, *reference);
}

TEST_F(DataParallelTest, WrapsAModelNotYetMovedAsTheGuideDoes) {
  // The guide's order: `model = DataParallel(model); model->to(device);`. The model is still on
  // the CPU when wrapped; the wrapper's to() then moves it to the first device, and gradients
  // follow it there.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  nn::Sequential mlp = make_mlp();
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  std::shared_ptr<nn::Module> model = mlp.ptr();
  model = nn::DataParallel(model, {test_device(0), test_device(1)});
  const Tensor x = random_tensor({6, 6}, kFloat32, rng).to(test_device(0));
  EXPECT_TRUE(throws_with<Error>([&] { model->forward(x); },
                                 "must have its parameters and buffers on the first device, test:0"));
  model->to(test_device(0));
  const Tensor out = model->forward(x);
  EXPECT_EQ(out.device(), test_device(0));
  out.sum().backward();
  const Tensor expected = reference->forward(x.to(Device("cpu"), kFloat64));
  expected.sum().backward();
  EXPECT_TRUE(all_close(values_of(out), values_of(expected), 1e-4, 1e-5));
  for (const Tensor& p : mlp->parameters()) EXPECT_EQ(p.grad().device(), test_device(0));
  expect_grads_match(*mlp, *reference);
}

TEST_F(DataParallelTest, ReplicasFollowTheModulesDtype) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  nn::Sequential mlp = make_mlp();
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  nn::DataParallel dp(mlp, {Device("cpu"), test_device(1)});
  dp->to(kFloat64);
  const Tensor x = random_tensor({6, 6}, kFloat64, rng);
  const Tensor out = dp->forward(x);
  EXPECT_EQ(out.dtype(), kFloat64);
  out.sum().backward();
  reference->forward(x).sum().backward();
  EXPECT_TRUE(all_close(values_of(out), values_of(reference->forward(x)), 1e-12, 1e-12));
  for (const Tensor& p : mlp->parameters()) EXPECT_EQ(p.grad().dtype(), kFloat64);
  expect_grads_match(*mlp, *reference);
}

TEST_F(DataParallelTest, ReplicasFollowRequiresGrad) {
  // Freezing or unfreezing a parameter of the wrapped module, before or after wrapping, holds for
  // every replica: a frozen parameter gets no gradient from any of them, an unfrozen one the sum of all.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (const bool freeze_before_wrapping : {true, false}) {
    SCOPED_TRACE(freeze_before_wrapping);
    nn::Sequential mlp = make_mlp();
    const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
    Tensor frozen = mlp->named_parameters()[0].second;
    Tensor frozen_reference = reference->named_parameters()[0].second;
    if (freeze_before_wrapping) frozen.requires_grad_(false);
    nn::DataParallel dp(mlp, {Device("cpu"), test_device(1), test_device(2)});
    frozen.requires_grad_(false);
    frozen_reference.requires_grad_(false);
    const Tensor x = random_tensor({9, 6}, kFloat32, rng);
    dp->forward(x).sum().backward();
    reference->forward(x.to(kFloat64)).sum().backward();
    EXPECT_FALSE(frozen.grad().defined());
    const auto got = mlp->named_parameters(), want = reference->named_parameters();
    for (std::size_t i = 1; i < got.size(); ++i) {
      SCOPED_TRACE(got[i].first);
      EXPECT_TRUE(all_close(values_of(got[i].second.grad()), values_of(want[i].second.grad()), 1e-4, 1e-5));
    }
    mlp->zero_grad();
    reference->zero_grad();
    frozen.requires_grad_(true);
    frozen_reference.requires_grad_(true);
    dp->forward(x).sum().backward();
    reference->forward(x.to(kFloat64)).sum().backward();
    expect_grads_match(*mlp, *reference);
  }
}

TEST_F(DataParallelTest, UnevenBatchesSplitAsChunk) {
  // 7 rows over 3 devices: 3, 3, 1; 2 rows over 3 devices: two chunks of 1, the third device idle.
  check_one_step_matches_reference({Device("cpu"), test_device(1), test_device(2)}, 7);
  check_one_step_matches_reference({Device("cpu"), test_device(1), test_device(2)}, 2);
  check_one_step_matches_reference({Device("cpu"), test_device(1), test_device(2)}, 1);
}

TEST_F(DataParallelTest, AnInputThatRequiresGradGetsTheWholeBatchGradient) {
  // Many forwards on fresh leaf inputs, over up to 8 threads: each input is split on the calling
  // thread, so its autograd state is set up by one thread. When each replica's thread split the
  // input itself, ThreadSanitizer reported that race in about a third of the runs of this test.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (const std::vector<Device>& devices :
       {std::vector<Device>{Device("cpu"), test_device(1), test_device(2)}, std::vector<Device>(8, Device("cpu"))}) {
    nn::Sequential mlp = make_mlp();
    const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
    nn::DataParallel dp(mlp, devices);
    for (int repeat = 0; repeat < 25; ++repeat) {
      const Tensor x = random_tensor({16, 6}, kFloat32, rng).requires_grad_();
      const Tensor weights = random_tensor({16, 3}, kFloat32, rng);
      weighted_sum(dp->forward(x), weights).backward();
      const Tensor x64 = x.detach().to(kFloat64).requires_grad_();
      weighted_sum(reference->forward(x64), weights).backward();
      ASSERT_TRUE(x.grad().defined());
      EXPECT_EQ(x.grad().device(), Device("cpu"));
      EXPECT_TRUE(all_close(values_of(x.grad()), values_of(x64.grad()), 1e-4, 1e-5));
    }
  }
}

TEST_F(DataParallelTest, ReplicasFollowOptimiserStepsWithoutBeingRebuilt) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  nn::Sequential mlp = make_mlp();
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  nn::DataParallel dp(mlp, {Device("cpu"), test_device(1), test_device(2)});
  const std::shared_ptr<nn::Module> replica1 = dp->replica(1);
  optim::SGD opt(dp->parameters(), {.lr = 0.05, .momentum = 0.9});
  optim::SGD ref_opt(reference->parameters(), {.lr = 0.05, .momentum = 0.9});
  for (int step = 0; step < 4; ++step) {
    const Tensor x = random_tensor({10, 6}, kFloat32, rng);
    const Tensor target = random_tensor({10, 3}, kFloat32, rng);
    opt.zero_grad();
    nn::functional::mse_loss(dp->forward(x), target).backward();
    opt.step();
    ref_opt.zero_grad();
    nn::functional::mse_loss(reference->forward(x.to(kFloat64)), target.to(kFloat64)).backward();
    ref_opt.step();
  }
  EXPECT_EQ(dp->replica(1), replica1);
  const auto got = mlp->named_parameters(), want = reference->named_parameters();
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].first);
    EXPECT_TRUE(all_close(values_of(got[i].second), values_of(want[i].second), 1e-4, 1e-5));
  }
  // After the next forward the replicas hold the stepped values.
  dp->forward(random_tensor({3, 6}, kFloat32, rng));
  const auto mirrored = replica1->named_parameters();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(values_of(mirrored[i].second), values_of(got[i].second));
}

// A running mean of its inputs (as BatchNorm's statistics), updated in forward while training.
struct RunningMeanImpl : nn::Module {
  RunningMeanImpl() {
    fc = register_module("fc", nn::Linear(4, 4));
    running = register_buffer("running_mean", zeros({4}));
  }
  Tensor forward(const Tensor& x) override {
    if (is_training()) {
      NoGradGuard no_grad;
      running.mul_(0.9).add_(x.mean({0}) * 0.1);
    }
    return fc->forward(x);
  }
  nn::Linear fc{nullptr};
  Tensor running;
};
HWARO_MODULE(RunningMean);

TEST_F(DataParallelTest, BuffersKeepTheFirstReplicasUpdates) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  RunningMean module;  // built by its default constructor: it has no clone_module()
  nn::DataParallel dp(module, {Device("cpu"), test_device(1)});
  const Tensor x = random_tensor({6, 4}, kFloat32, rng);
  dp->forward(x);
  const std::vector<double> rows = values_of(x);
  std::vector<double> expected(4, 0.0);
  for (int r = 0; r < 3; ++r) {  // the first chunk: rows 0..2
    for (int c = 0; c < 4; ++c) expected[static_cast<std::size_t>(c)] += 0.1 * rows[static_cast<std::size_t>(r * 4 + c)] / 3.0;
  }
  EXPECT_TRUE(all_close(values_of(module->running), expected, 1e-5, 1e-6));
  // The second replica updated its own copy; the next forward overwrites it with the original's.
  const Tensor replica_buffer = dp->replica(1)->named_buffers()[0].second;
  EXPECT_FALSE(all_close(values_of(replica_buffer), values_of(module->running), 1e-6, 1e-7));
  dp->eval();
  dp->forward(x);
  EXPECT_EQ(values_of(replica_buffer), values_of(module->running));
}

TEST_F(DataParallelTest, OneDeviceIsATransparentWrapper) {
  std::mt19937_64 rng(fresh_seed());
  nn::Sequential mlp = make_mlp();
  std::shared_ptr<nn::Module> as_module = mlp.ptr();
  as_module = nn::DataParallel(as_module, {Device("cpu")});  // the guide's `model = DataParallel(model)`
  const Tensor x = random_tensor({4, 6}, kFloat32, rng);
  EXPECT_EQ(values_of(as_module->forward(x)), values_of(mlp->forward(x)));
  EXPECT_EQ(as_module->state_dict().count("module.0.weight"), 1u);
  EXPECT_EQ(as_module->parameters().size(), mlp->parameters().size());
  if (cuda::is_available()) {
    // As PyTorch's: with GPUs the default is all of them; the module must be on the first when
    // forward runs, and with one GPU wrapping moves it there.
    nn::DataParallel by_default(mlp);
    EXPECT_EQ(by_default->devices().size(), static_cast<std::size_t>(cuda::device_count()));
    EXPECT_EQ(by_default->devices().front(), Device("cuda:0"));
    if (cuda::device_count() == 1) {
      EXPECT_EQ(mlp->device(), Device("cuda:0"));
    }
  } else {
    // Without GPUs the default device list is the module's own device.
    nn::DataParallel by_default(mlp);
    EXPECT_EQ(by_default->devices(), (std::vector<Device>{Device("cpu")}));
  }
}

TEST_F(DataParallelTest, BuildingReplicasLeavesTheDefaultGeneratorAlone) {
  manual_seed(123);
  nn::Sequential mlp = make_mlp();
  const std::uint64_t offset = default_generator().offset();
  ASSERT_GT(offset, 0u);  // building a Linear draws numbers: replicas would too
  nn::DataParallel dp(mlp, {Device("cpu"), test_device(1), test_device(2)});
  EXPECT_EQ(default_generator().offset(), offset);
}

TEST_F(DataParallelTest, NoGradForwardRecordsNothing) {
  std::mt19937_64 rng(fresh_seed());
  nn::DataParallel dp(make_mlp(), {Device("cpu"), test_device(1)});
  NoGradGuard no_grad;
  EXPECT_FALSE(dp->forward(random_tensor({4, 6}, kFloat32, rng)).requires_grad());
}

// Adds noise drawn from the default generator (as dropout draws its mask). Replica 0 (on the CPU)
// first draws 1000 numbers more when `extra_draws` is set; replica 1 (on test:1) waits until
// replica 0 has finished, so that drawing from one shared generator would give it numbers that
// depend on how many replica 0 took.
std::atomic<bool> extra_draws{false};
std::atomic<bool> replica_0_done{false};

struct NoisyImpl : nn::Module {
  Tensor forward(const Tensor& x) override {
    if (x.device().is_cpu()) {
      if (extra_draws) rand({1000});
      Tensor out = x + rand_like(x);
      replica_0_done = true;
      return out;
    }
    while (!replica_0_done) std::this_thread::yield();
    return x + rand_like(x);
  }
};
HWARO_MODULE(Noisy);

TEST_F(DataParallelTest, EachReplicaDrawsFromItsOwnGeneratorSoASeededRunRepeats) {
  Noisy module;
  nn::DataParallel dp(module, {Device("cpu"), test_device(1)});
  const Tensor x = zeros({4, 3});
  const auto run = [&](bool extra) {
    extra_draws = extra;
    replica_0_done = false;
    manual_seed(2024);
    return values_of(dp->forward(x));
  };
  const std::vector<double> plain = run(false), again = run(false), with_extra = run(true);
  EXPECT_EQ(plain, again);  // a seeded run repeats
  // Replica 1's rows (the last two) do not depend on what replica 0 drew.
  EXPECT_EQ(std::vector<double>(plain.begin() + 6, plain.end()), std::vector<double>(with_extra.begin() + 6, with_extra.end()));
  // The replicas' noises are not one and the same draw.
  EXPECT_NE(std::vector<double>(plain.begin(), plain.begin() + 6), std::vector<double>(plain.begin() + 6, plain.end()));
  // The next forward draws new numbers: the generators come from the default one, which moves on.
  manual_seed(2024);
  extra_draws = false;
  replica_0_done = false;
  dp->forward(x);
  replica_0_done = false;
  EXPECT_NE(values_of(dp->forward(x)), plain);
}

// Throws E("failed on purpose") when it runs on test:1; elsewhere returns its input.
template <typename E>
struct FailsOnTestDevice1 : nn::Module {
  Tensor forward(const Tensor& x) override {
    if (x.device() == test_device(1)) throw E("failed on purpose");
    return x;
  }
};

TEST_F(DataParallelTest, AReplicasErrorNamesTheReplicaAndKeepsItsType) {
  const auto expect_from_replica_1 = [](auto error_type, const std::string& type_name) {
    using E = decltype(error_type);
    nn::DataParallel dp(std::make_shared<FailsOnTestDevice1<E>>(), {Device("cpu"), test_device(1), test_device(2)});
    const auto forward = [&] { dp->forward(zeros({3, 2})); };
    EXPECT_TRUE(throws_with<E>(
        forward, "DataParallel: caught " + type_name + " in replica 1 on device test:1: failed on purpose"));
  };
  expect_from_replica_1(IndexError(""), "hw::IndexError");
  expect_from_replica_1(OutOfMemoryError(""), "hw::OutOfMemoryError");
  expect_from_replica_1(DeviceMismatchError(""), "hw::DeviceMismatchError");
  expect_from_replica_1(Error(""), "hw::Error");
  // Another type cannot be rebuilt with a new message: it reaches the caller unchanged.
  nn::DataParallel dp(std::make_shared<FailsOnTestDevice1<std::logic_error>>(), {Device("cpu"), test_device(1)});
  EXPECT_TRUE(throws_with<std::logic_error>([&] { dp->forward(zeros({2, 2})); }, "failed on purpose"));
}

TEST_F(DataParallelTest, WrongUsesAreClearErrors) {
  nn::Sequential mlp = make_mlp();
  nn::DataParallel elsewhere(mlp, {test_device(1), Device("cpu")});
  EXPECT_TRUE(throws_with<Error>([&] { elsewhere->forward(zeros({4, 6})); },
                                 "must have its parameters and buffers on the first device, test:1"));
  const int gpus = cuda::device_count();
  EXPECT_TRUE(throws_with<Error>([&] { nn::DataParallel(mlp, {Device("cpu"), Device(kCUDA, gpus)}); },
                                 "is not one of the " + std::to_string(gpus) + " visible GPUs"));
  EXPECT_TRUE(throws_with<Error>(
      [&] { nn::DataParallel(mlp, {Device("cpu"), test_device(1)}, [] { return nn::Sequential(nn::Linear(6, 3)).ptr(); }); },
      "does not have the parameters and buffers of the wrapped Sequential"));
  struct Opaque : nn::Module {
    explicit Opaque(int) {}
  };
  EXPECT_TRUE(throws_with<Error>([] { nn::DataParallel(std::make_shared<Opaque>(1), {Device("cpu"), Device("cpu")}); },
                                 "cannot be replicated: it does not override clone_module() and has no default constructor"));
  nn::DataParallel dp(mlp, {Device("cpu"), test_device(1)});
  EXPECT_TRUE(throws_with<Error>([&] { dp->forward(zeros({0, 6})); }, "at least one row"));
  EXPECT_TRUE(throws_with<Error>([&] { dp->forward(zeros({})); }, "at least one row"));
  // An error inside a replica's thread reaches the caller, from the first replica that failed.
  EXPECT_TRUE(throws_with<Error>([&] { dp->forward(zeros({4, 5})); }, "in replica 0 on device cpu"));
  EXPECT_TRUE(throws_with<Error>([&] { dp->forward(zeros({4, 5})); }, "5"));
}

}  // namespace
}  // namespace hwaro::test
