// Optimiser cases test_optim leaves out: Adam with its default options against torch.optim's
// rule in float64, and SGD with momentum resumed from its state_dict (its buffer restored).
#include <cmath>
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

}  // namespace
}  // namespace hwaro::test
