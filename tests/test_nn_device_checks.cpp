// The same-device error (Dev Tip 1) for what is composed of several ops: nn::functional's norms,
// layers and losses check every tensor they are given before any of their steps runs, and name
// themselves and the argument; batch_norm's running statistics are not half updated by a refused
// call; and the optimisers, backward's gradient argument and DataParallel throw DeviceMismatchError
// too. "test:0" (the test backend) stands in for a second device.
#include <functional>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;

// What each refusal must say: the two devices, the argument and the function.
std::string mismatch(const std::string& argument, const std::string& op) {
  return "Expected all tensors to be on the same device, but found at least two devices, cpu and test:0! (when "
         "checking argument '" +
         argument + "' of " + op + ")";
}

struct Case {
  std::string op, argument;
  std::function<void()> call;
};

TEST(FunctionalDeviceChecks, EachCompositeNamesItselfAndTheArgument) {
  const Device other = other_device();
  const Tensor x = randn({4, 3, 5, 5});
  const Tensor rows = randn({4, 6});
  const Tensor channels = ones({3});
  const Tensor labels = tensor(std::vector<std::int64_t>{0, 2, 1, 5});
  const Tensor probabilities = rand({4, 6});
  const std::vector<Case> cases = {
      {"batch_norm", "running_var", [&] { F::batch_norm(x, zeros({3}), ones({3}).to(other), {}, {}, true); }},
      {"batch_norm", "weight", [&] { F::batch_norm(x, zeros({3}), ones({3}), channels.to(other)); }},
      {"layer_norm", "weight", [&] { F::layer_norm(rows, {6}, ones({6}).to(other)); }},
      {"layer_norm", "bias", [&] { F::layer_norm(rows, {6}, ones({6}), zeros({6}).to(other)); }},
      {"group_norm", "bias", [&] { F::group_norm(x, 3, channels, zeros({3}).to(other)); }},
      {"embedding", "input", [&] { F::embedding(labels.to(other), randn({6, 2})); }},
      {"linear", "weight", [&] { F::linear(rows, randn({2, 6}).to(other)); }},
      {"linear", "bias", [&] { F::linear(randn({2, 4, 6}), randn({2, 6}), zeros({2}).to(other)); }},
      {"conv2d", "weight", [&] { F::conv2d(x, randn({2, 3, 3, 3}).to(other)); }},
      {"conv2d", "bias", [&] { F::conv2d(x, randn({2, 3, 3, 3}), zeros({2}).to(other)); }},
      {"cross_entropy", "target", [&] { F::cross_entropy(rows, labels.to(other)); }},
      {"cross_entropy", "weight", [&] { F::cross_entropy(rows, labels, {.weight = ones({6}).to(other)}); }},
      {"nll_loss", "target", [&] { F::nll_loss(rows.log_softmax(1), labels.to(other)); }},
      {"mse_loss", "target", [&] { F::mse_loss(rows, rows.to(other)); }},
      {"l1_loss", "target", [&] { F::l1_loss(rows, rows.to(other)); }},
      {"smooth_l1_loss", "target", [&] { F::smooth_l1_loss(rows, rows.to(other)); }},
      {"huber_loss", "target", [&] { F::huber_loss(rows, rows.to(other)); }},
      {"kl_div", "target", [&] { F::kl_div(rows.log_softmax(1), probabilities.to(other)); }},
      {"binary_cross_entropy", "target", [&] { F::binary_cross_entropy(probabilities, probabilities.to(other)); }},
      {"binary_cross_entropy", "weight",
       [&] { F::binary_cross_entropy(probabilities, probabilities, F::Reduction::Mean, ones({6}).to(other)); }},
      {"binary_cross_entropy_with_logits", "pos_weight",
       [&] { F::binary_cross_entropy_with_logits(rows, probabilities, F::Reduction::Mean, ones({6}).to(other)); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.argument);
    EXPECT_TRUE(throws_with<DeviceMismatchError>(c.call, mismatch(c.argument, c.op)));
  }
}

TEST(FunctionalDeviceChecks, ARefusedBatchNormLeavesTheRunningStatisticsAlone) {
  const Device other = other_device();
  Tensor running_mean = full({3}, 0.5), running_var = full({3}, 2.0);
  const Tensor weight = ones({3}).to(other);
  EXPECT_THROW(F::batch_norm(randn({4, 3}), running_mean, running_var, weight, {}, /*training=*/true),
               DeviceMismatchError);
  EXPECT_EQ(values_of(running_mean), (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(values_of(running_var), (std::vector<double>{2.0, 2.0, 2.0}));
}

// A model moved after the optimiser's first step leaves the optimiser's state behind: step() says
// so before it changes anything, and loading the state again moves it to the parameters' device.
TEST(OptimizerDeviceChecks, StateLeftOnTheOldDeviceIsRefusedBeforeAnyUpdate) {
  const Device other = other_device();
  Tensor first = randn({3}).set_requires_grad(true);
  Tensor second = randn({2}).set_requires_grad(true);
  optim::Adam adam({first, second}, {.lr = 0.1});
  first.mutable_grad() = ones({3});
  second.mutable_grad() = ones({2});
  adam.step();
  {
    NoGradGuard no_grad;
    second.set_data(second.detach().to(other));  // model->to() moves parameters this way
  }
  second.mutable_grad() = ones({2}).to(other);
  const std::vector<double> before = values_of(first);
  EXPECT_TRUE(throws_with<DeviceMismatchError>(
      [&] { adam.step(); }, "Adam.step(): the state 'exp_avg' of parameter 1 is on cpu but the parameter is on test:0"));
  EXPECT_EQ(values_of(first), before);  // the group's other parameter was not updated either
  adam.load_state_dict(adam.state_dict());
  adam.step();
  EXPECT_NE(values_of(first), before);
}

TEST(OptimizerDeviceChecks, AGradientOnAnotherDeviceIsADeviceMismatch) {
  Tensor p = randn({3}).set_requires_grad(true);
  optim::SGD sgd({p}, {.lr = 0.1});
  p.mutable_grad() = ones({3}).to(other_device());
  EXPECT_TRUE(throws_with<DeviceMismatchError>(
      [&] { sgd.step(); }, "SGD.step(): the gradient of parameter 0 is on test:0 but the parameter is on cpu"));
}

TEST(AutogradDeviceChecks, ABackwardGradientOnAnotherDeviceIsADeviceMismatch) {
  Tensor x = randn({3}).set_requires_grad(true);
  const Tensor y = x * 2.0;
  EXPECT_TRUE(throws_with<DeviceMismatchError>([&] { y.backward(ones({3}).to(other_device())); },
                                               "backward: the gradient is on test:0 but the tensor is on cpu"));
}

// A .grad set through mutable_grad() on another device (or with another shape) is refused before
// backward runs any node, so the other leaves' .grad are not half accumulated. The chain on w is
// built first so that x's accumulation would run before w's.
TEST(AutogradDeviceChecks, AGradSetOnAnotherDeviceIsRefusedBeforeAnyLeafAccumulates) {
  Tensor w = randn({2, 3}).set_requires_grad(true);
  Tensor x = randn({4}).set_requires_grad(true);
  const Tensor from_w = (w * 3.0).sum();
  const Tensor loss = x.sum() + from_w;
  w.mutable_grad() = zeros({2, 3}).to(other_device());
  EXPECT_TRUE(throws_with<DeviceMismatchError>(
      [&] { loss.backward({}, /*retain_graph=*/true); },
      "backward: a leaf of shape [2, 3] on cpu has a .grad on test:0, set through mutable_grad()"));
  EXPECT_FALSE(x.grad().defined()) << "x.grad was accumulated by a backward that was refused";

  w.mutable_grad() = zeros({3, 2});
  EXPECT_TRUE(throws_with<Error>([&] { loss.backward({}, /*retain_graph=*/true); },
                                 "backward: a leaf of shape [2, 3] has a .grad of shape [3, 2]"));
  EXPECT_FALSE(x.grad().defined());

  w.mutable_grad() = Tensor();
  loss.backward();
  EXPECT_EQ(values_of(x.grad()), std::vector<double>(4, 1.0));
  EXPECT_EQ(values_of(w.grad()), std::vector<double>(6, 3.0));
}

}  // namespace
}  // namespace hwaro::test
