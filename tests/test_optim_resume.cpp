// Optimiser cases test_optim leaves out: Adam with its default options against torch.optim's
// rule in float64, and SGD with momentum resumed from its state_dict (its buffer restored).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

TEST(OptimDefaults, AdamWithDefaultOptionsMatchesTorchsRule) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  constexpr int kSteps = 3;
  const double lr = 0.01;
  const Tensor start = random_tensor({9}, kFloat64, rng);
  std::vector<std::vector<double>> grads;
  for (int t = 0; t < kSteps; ++t) grads.push_back(values_of(random_tensor({9}, kFloat64, rng, -1, 1)));

  Tensor p = start.clone().set_requires_grad(true);
  optim::Adam adam({p}, {.lr = lr});
  // torch.optim.Adam: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  // p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps), with b1 0.9, b2 0.999, eps 1e-8.
  std::vector<double> want = values_of(start), m(9, 0.0), v(9, 0.0);
  for (int t = 1; t <= kSteps; ++t) {
    p.mutable_grad() = tensor(grads[t - 1]);
    adam.step();
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double g = grads[t - 1][i];
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      want[i] -= lr * (m[i] / (1 - std::pow(0.9, t))) / (std::sqrt(v[i] / (1 - std::pow(0.999, t))) + 1e-8);
    }
    EXPECT_TRUE(all_close(values_of(p), want, 1e-12, 1e-14)) << "step " << t;
  }
}

TEST(OptimDefaults, SgdWithMomentumResumesFromItsStateDictExactly) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<Tensor> grads;
  for (int t = 0; t < 6; ++t) grads.push_back(random_tensor({7}, kFloat64, rng, -1, 1));
  const optim::SGDOptions options{.lr = 0.05, .momentum = 0.9};
  Tensor a = random_tensor({7}, kFloat64, rng).set_requires_grad(true);
  optim::SGD first({a}, options);
  for (int t = 0; t < 3; ++t) {
    a.mutable_grad() = grads[t].clone();
    first.step();
  }
  Tensor b = a.detach().clone().set_requires_grad(true);
  optim::SGD resumed({b}, options);
  resumed.load_state_dict(first.state_dict());
  // Without the momentum buffer, a fresh optimiser takes plain gradient steps and drifts apart.
  Tensor c = a.detach().clone().set_requires_grad(true);
  optim::SGD restarted({c}, options);
  for (int t = 3; t < 6; ++t) {
    a.mutable_grad() = grads[t].clone();
    b.mutable_grad() = grads[t].clone();
    c.mutable_grad() = grads[t].clone();
    first.step();
    resumed.step();
    restarted.step();
  }
  EXPECT_EQ(values_of(b), values_of(a));
  EXPECT_NE(values_of(c), values_of(a));
}

// Steps `adam` once per gradient and returns the values of its parameter `p`.
std::vector<double> adam_steps(optim::Adam& adam, Tensor& p, const std::vector<Tensor>& grads) {
  for (const Tensor& g : grads) {
    p.mutable_grad() = g.clone();
    adam.step();
  }
  return values_of(p);
}

TEST(OptimStateDict, LoadingReplacesTheStateAsPyTorchDoes) {
  // Rolling back to a checkpoint taken before any step must forget the moments and step counts
  // gathered since; merging would keep them and the rolled-back run would diverge.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<Tensor> grads;
  for (int t = 0; t < 3; ++t) grads.push_back(random_tensor({5}, kFloat64, rng, -1, 1));
  const Tensor start = random_tensor({5}, kFloat64, rng);

  Tensor p = start.clone().set_requires_grad(true);
  optim::Adam adam({p}, {.lr = 0.1});
  const auto before_any_step = adam.state_dict();
  adam_steps(adam, p, grads);
  adam.load_state_dict(before_any_step);
  NoGradGuard no_grad;
  p.copy_(start);
  const std::vector<double> rolled_back = adam_steps(adam, p, grads);

  Tensor q = start.clone().set_requires_grad(true);
  optim::Adam fresh({q}, {.lr = 0.1});
  EXPECT_EQ(rolled_back, adam_steps(fresh, q, grads));
}

TEST(OptimStateDict, MalformedKeysAndMisfittingStateAreClearErrorsThatChangeNothing) {
  Tensor p = zeros({10}, {.dtype = kFloat64}).set_requires_grad(true);
  optim::Adam adam({p}, {.lr = 0.1});
  p.mutable_grad() = ones({10}, {.dtype = kFloat64});
  adam.step();
  const auto good = adam.state_dict();
  const auto with = [&](const std::string& key, const Tensor& value) {
    auto state = good;
    state[key] = value;
    return state;
  };
  const Tensor moment = zeros({10}, {.dtype = kFloat64});
  const std::vector<std::pair<std::map<std::string, Tensor>, std::string>> cases = {
      {with("state.x.exp_avg", moment), "malformed key 'state.x.exp_avg'"},
      {with("param_groups.zz", scalar_tensor(0.1)), "malformed key 'param_groups.zz'"},
      {with("state.99999999999999999999999.exp_avg", moment), "malformed key 'state.99999999999999999999999.exp_avg'"},
      {with("state.0", moment), "malformed key 'state.0'"},
      {with("state.3.exp_avg", moment), "names parameter 3 but there are 1"},
      {with("state.0.exp_avg", zeros({2, 5}, {.dtype = kFloat64})), "'state.0.exp_avg' is float64 [2, 5] but parameter 0 is float64 [10]"},
      {with("state.0.exp_avg", zeros({10}, {.dtype = kInt32})), "'state.0.exp_avg' is int32 [10]"},
      {with("state.0.step", scalar_tensor(-2.0)), "'state.0.step' must be a non-negative integer"},
      {with("param_groups.0.lr", zeros({2})), "'param_groups.0.lr' must hold one value, found 2"},
  };
  for (const auto& [state, message] : cases) {
    SCOPED_TRACE(message);
    EXPECT_TRUE(throws_with<Error>([&] { adam.load_state_dict(state); }, message));
    // Nothing changed: the state dict is still the one before the refused load.
    const auto now = adam.state_dict();
    ASSERT_EQ(now.size(), good.size());
    for (const auto& [key, t] : good) EXPECT_EQ(values_of(now.at(key)), values_of(t)) << key;
  }
}

// As PyTorch's "loaded state dict has a different number of parameter groups" and "... contains a
// parameter group that doesn't match the size of optimizer's group": a state saved from other
// groups is refused and changes nothing, where its state.<index> keys would have landed on the
// parameters of other groups. The same layout loads.
TEST(OptimStateDict, AStateFromOtherParameterGroupsIsRefused) {
  const auto param = [] { return zeros({3}, {.dtype = kFloat64}).set_requires_grad(true); };
  const Tensor a = param(), b = param(), c = param();
  const auto stepped = [](optim::SGD& opt, const std::vector<Tensor>& params) {
    for (const Tensor& p : params) p.mutable_grad() = ones({3}, {.dtype = kFloat64});
    opt.step();
  };
  optim::SGD only_a({a}, {.lr = 0.1, .momentum = 0.9});
  stepped(only_a, {a});
  optim::SGD first_alone({a}, {.lr = 0.1, .momentum = 0.9});
  first_alone.add_param_group({b, c}, 0.2);
  stepped(first_alone, {a, b, c});
  optim::SGD last_alone({a, b}, {.lr = 0.3, .momentum = 0.9});
  last_alone.add_param_group({c}, 0.4);

  const auto unchanged = [](const optim::SGD& opt, const std::map<std::string, Tensor>& before) {
    const auto now = opt.state_dict();
    ASSERT_EQ(now.size(), before.size());
    for (const auto& [key, t] : before) EXPECT_EQ(values_of(now.at(key)), values_of(t)) << key;
  };
  const auto first_alone_before = first_alone.state_dict();
  EXPECT_TRUE(throws_with<Error>([&] { first_alone.load_state_dict(only_a.state_dict()); },
                                 "the loaded state has 1 parameter groups but the optimizer has 2"));
  unchanged(first_alone, first_alone_before);
  const auto last_alone_before = last_alone.state_dict();
  EXPECT_TRUE(throws_with<Error>([&] { last_alone.load_state_dict(first_alone.state_dict()); },
                                 "the loaded state's parameter group 0 has 1 parameters but the optimizer's has 2"));
  unchanged(last_alone, last_alone_before);
  EXPECT_TRUE(throws_with<Error>([&] { only_a.load_state_dict(first_alone.state_dict()); },
                                 "names group 1 but there are 1"));

  optim::SGD same_layout({a}, {.lr = 0.1, .momentum = 0.9});
  same_layout.add_param_group({b, c});
  same_layout.load_state_dict(first_alone.state_dict());
  unchanged(same_layout, first_alone.state_dict());
  EXPECT_EQ(same_layout.param_groups()[1].lr, 0.2);

  // A state saved before the group sizes were (no num_params) still loads.
  auto without_sizes = first_alone.state_dict();
  ASSERT_EQ(without_sizes.erase("param_groups.0.num_params") + without_sizes.erase("param_groups.1.num_params"), 2U);
  optim::SGD old_layout({a}, {.lr = 0.1, .momentum = 0.9});
  old_layout.add_param_group({b, c});
  old_layout.load_state_dict(without_sizes);
  EXPECT_EQ(old_layout.param_groups()[1].lr, 0.2);
  EXPECT_EQ(values_of(old_layout.state_dict().at("state.2.momentum_buffer")),
            values_of(first_alone.state_dict().at("state.2.momentum_buffer")));
}

// A state dict with part of a parameter's Adam state (exp_avg without exp_avg_sq, or the other
// way round, or the moments without their step count) is refused by step() with a message, as
// PyTorch's step fails on the missing key; nothing is stepped. Before, the fused kernel read the
// missing exp_avg_sq through a null pointer, and a lone exp_avg_sq was silently replaced by zeros.
TEST(OptimStateDict, AnIncompleteAdamStateIsRefusedByStep) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (bool contiguous : {true, false}) {
    for (const char* dropped : {"exp_avg_sq", "exp_avg", "step"}) {
      SCOPED_TRACE(std::string(dropped) + (contiguous ? " fused" : " composite"));
      const Tensor start = random_tensor({6}, kFloat64, rng);
      Tensor p = (contiguous ? start.clone() : non_contiguous_copy(start)).set_requires_grad(true);
      optim::AdamW adam({p}, {.lr = 0.01});
      p.mutable_grad() = random_tensor({6}, kFloat64, rng);
      adam.step();
      auto state = adam.state_dict();
      ASSERT_EQ(state.erase(std::string("state.0.") + dropped), 1U);
      adam.load_state_dict(state);
      const std::vector<double> before = values_of(p);
      EXPECT_TRUE(throws_with<Error>([&] { adam.step(); }, "AdamW: the state of parameter 0 is incomplete"));
      EXPECT_EQ(values_of(p), before);
    }
  }
}

}  // namespace
}  // namespace hwaro::test
