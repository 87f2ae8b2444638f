// Losses against float64 references written out here, their gradients by finite differences,
// their stability at extreme logits, their errors on bad targets, and the loss modules.
#include <cmath>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;

// -log softmax(row)[target] in float64, straight from the values.
double reference_ce(const std::vector<double>& logits, std::int64_t classes, std::int64_t row, std::int64_t target,
                    double smoothing) {
  double m = -INFINITY;
  for (std::int64_t c = 0; c < classes; ++c) m = std::max(m, logits[row * classes + c]);
  double z = 0;
  for (std::int64_t c = 0; c < classes; ++c) z += std::exp(logits[row * classes + c] - m);
  const double lse = m + std::log(z);
  double smooth = 0;
  for (std::int64_t c = 0; c < classes; ++c) smooth += lse - logits[row * classes + c];
  return (1 - smoothing) * (lse - logits[row * classes + target]) + smoothing * smooth / static_cast<double>(classes);
}

TEST(Losses, CrossEntropyMatchesAFloat64Reference) {
  std::mt19937_64 rng(fresh_seed());
  for (double smoothing : {0.0, 0.1}) {
    const Tensor logits = random_tensor({6, 5}, kFloat32, rng, -4, 4);
    // Classes 0..3; the first is not the ignored class 2, so the mean is over at least one target.
  const Tensor target = cat({zeros({1}, {.dtype = kInt64}), random_tensor({5}, kInt64, rng, 0, 3)});
    const std::vector<double> l = values_of(logits), t = values_of(target);
    double sum = 0;
    std::vector<double> each;
    for (int i = 0; i < 6; ++i) {
      each.push_back(reference_ce(l, 5, i, static_cast<std::int64_t>(t[i]), smoothing));
      sum += each.back();
    }
    F::CrossEntropyOptions mean{.label_smoothing = smoothing};
    F::CrossEntropyOptions none{.reduction = F::Reduction::None, .label_smoothing = smoothing};
    EXPECT_NEAR(F::cross_entropy(logits, target, mean).item<double>(), sum / 6, 1e-5);
    EXPECT_TRUE(all_close(values_of(F::cross_entropy(logits, target, none)), each, 1e-5, 1e-5));
  }
}

TEST(Losses, IgnoreIndexIsLeftOutOfTheMean) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor logits = random_tensor({4, 3}, kFloat64, rng);
  const Tensor target = tensor<std::int64_t>({2, -100, 0, -100});
  const std::vector<double> l = values_of(logits);
  const double expected = (reference_ce(l, 3, 0, 2, 0) + reference_ce(l, 3, 2, 0, 0)) / 2;
  EXPECT_NEAR(F::cross_entropy(logits, target).item<double>(), expected, 1e-12);
}

TEST(Losses, CrossEntropyOverSpatialDims) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor logits = random_tensor({2, 3, 4}, kFloat64, rng);  // N, C, d
  const Tensor target = random_tensor({2, 4}, kInt64, rng, 0, 2);
  const Tensor flat = logits.permute({0, 2, 1}).reshape({8, 3});
  EXPECT_NEAR(F::cross_entropy(logits, target).item<double>(),
              F::cross_entropy(flat, target.reshape({8})).item<double>(), 1e-12);
}

TEST(Losses, CrossEntropyIsStableAtHugeLogits) {
  const Tensor logits = tensor({{1000.f, -1000.f}, {-1000.f, 1000.f}});
  const Tensor target = tensor<std::int64_t>({0, 0});
  EXPECT_NEAR(F::cross_entropy(logits, target).item<double>(), 1000.0, 1e-3);  // (0 + 2000) / 2
}

TEST(Losses, BadTargetsAreClearErrors) {
  const Tensor logits = randn({2, 3});
  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, tensor<std::int64_t>({0, 3})); }, "out of bounds"));
  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, tensor({0.f, 1.f})); }, "int64"));
  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, tensor<std::int64_t>({0, 1, 2})); }, "does not match"));
  EXPECT_TRUE(throws_with<Error>([&] { F::mse_loss(randn({4, 1}), randn({4})); }, "differ"));
}

TEST(Losses, RegressionAndBinaryLossesMatchReferences) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor a = random_tensor({3, 4}, kFloat64, rng, -30, 30);
  const Tensor b = random_tensor({3, 4}, kFloat64, rng, 0, 1);
  const std::vector<double> av = values_of(a), bv = values_of(b);
  double mse = 0, l1 = 0, bce = 0;
  for (std::size_t i = 0; i < av.size(); ++i) {
    mse += (av[i] - bv[i]) * (av[i] - bv[i]);
    l1 += std::abs(av[i] - bv[i]);
    // -[y log s(x) + (1 - y) log(1 - s(x))], in the overflow-free form.
    bce += std::max(av[i], 0.0) - av[i] * bv[i] + std::log1p(std::exp(-std::abs(av[i])));
  }
  const double n = static_cast<double>(av.size());
  EXPECT_NEAR(F::mse_loss(a, b).item<double>(), mse / n, 1e-10);
  EXPECT_NEAR(F::l1_loss(a, b, F::Reduction::Sum).item<double>(), l1, 1e-10);
  EXPECT_NEAR(F::binary_cross_entropy_with_logits(a, b).item<double>(), bce / n, 1e-10);
}

// Where the loss is tiny next to 1 (a confident right answer), 1 + e^-x and 1 - p round to 1 in
// float32 and a log of them is 0; PyTorch takes log1p, and so must hwaro: float32 against float64.
TEST(Losses, BinaryLossesKeepTheirDigitsWhereTheLossIsTiny) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const Tensor logits = random_tensor({64}, kFloat32, rng, 10, 40);
  const std::vector<double> x = values_of(logits);
  std::vector<double> expected_logits;
  for (double v : x) expected_logits.push_back(std::log1p(std::exp(-v)));
  EXPECT_TRUE(all_close(values_of(F::binary_cross_entropy_with_logits(logits, ones({64}), F::Reduction::None)),
                        expected_logits, 1e-5, 0.0));

  const Tensor probs = random_tensor({64}, kFloat32, rng, 1e-9, 1e-4);
  std::vector<double> expected_probs;
  for (double p : values_of(probs)) expected_probs.push_back(-std::log1p(-p));
  EXPECT_TRUE(all_close(values_of(F::binary_cross_entropy(probs, zeros({64}), F::Reduction::None)), expected_probs,
                        1e-5, 0.0));
}

TEST(Losses, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor target = random_tensor({5}, kInt64, rng, 0, 3);
  const Tensor probs = random_tensor({5, 4}, kFloat64, rng, 0, 1);
  Tensor x = random_tensor({5, 4}, kFloat64, rng).set_requires_grad(true);
  const std::vector<std::pair<std::string, std::function<Tensor(const std::vector<Tensor>&)>>> losses = {
      {"cross_entropy", [&](auto& v) { return F::cross_entropy(v[0], target); }},
      {"cross_entropy_smoothing", [&](auto& v) { return F::cross_entropy(v[0], target, {.label_smoothing = 0.2}); }},
      {"nll", [&](auto& v) { return F::nll_loss(v[0].log_softmax(1), target); }},
      {"mse", [&](auto& v) { return F::mse_loss(v[0], probs); }},
      {"l1", [&](auto& v) { return F::l1_loss(v[0], probs); }},
      {"bce_logits", [&](auto& v) { return F::binary_cross_entropy_with_logits(v[0], probs); }},
      {"bce_logits_weights",
       [&](auto& v) {
         return F::binary_cross_entropy_with_logits(v[0], probs, F::Reduction::Sum, probs[0] + 0.5, probs.select(1, 1).unsqueeze(1));
       }},
  };
  for (const auto& [name, fn] : losses) {
    const auto r = autograd::gradcheck(fn, {x});
    EXPECT_TRUE(r.ok) << name << ": " << r.message;
  }
}

// Each loss module gives its functional form's value with the options it holds; its weights are
// buffers, so the module moves to another device with them and computes there.
TEST(LossModules, ForwardAsFunctionalAndWeightsMoveWithTheModule) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor logits = random_tensor({6, 4}, kFloat64, rng);
  // Classes 0..3; the first is not the ignored class 2, so the mean is over at least one target.
  const Tensor target = cat({zeros({1}, {.dtype = kInt64}), random_tensor({5}, kInt64, rng, 0, 3)});
  const Tensor probs = random_tensor({6, 4}, kFloat64, rng, 0, 1);
  const Tensor other = random_tensor({6, 4}, kFloat64, rng);
  const Tensor class_weight = random_tensor({4}, kFloat64, rng, 0.5, 2);
  const Tensor pos_weight = random_tensor({4}, kFloat64, rng, 0.5, 3);
  const F::CrossEntropyOptions ce_options{.ignore_index = 2, .label_smoothing = 0.1, .weight = class_weight};

  nn::CrossEntropyLoss ce(ce_options);
  nn::NLLLoss nll(F::CrossEntropyOptions{.weight = class_weight});
  nn::MSELoss mse(F::Reduction::Sum);
  nn::L1Loss l1;
  const Tensor element_weight = random_tensor({6, 1}, kFloat64, rng, 0.5, 2);  // per row, broadcast
  nn::BCEWithLogitsLoss bce(F::Reduction::Mean, pos_weight, element_weight);
  const Tensor log_probs = logits.log_softmax(1);
  const double want_ce = F::cross_entropy(logits, target, ce_options).item<double>();
  const double want_nll = F::nll_loss(log_probs, target, {.weight = class_weight}).item<double>();
  const double want_bce =
      F::binary_cross_entropy_with_logits(logits, probs, F::Reduction::Mean, pos_weight, element_weight).item<double>();
  EXPECT_EQ(ce->forward(logits, target).item<double>(), want_ce);
  EXPECT_EQ(nll->forward(log_probs, target).item<double>(), want_nll);
  EXPECT_EQ(mse->forward(logits, other).item<double>(), F::mse_loss(logits, other, F::Reduction::Sum).item<double>());
  EXPECT_EQ(l1->forward(logits, other).item<double>(), F::l1_loss(logits, other).item<double>());
  EXPECT_EQ(bce->forward(logits, probs).item<double>(), want_bce);
  // pos_weight p multiplies the positive term, weight w the element: -w [p y log s(x) + (1 - y) log(1 - s(x))].
  const std::vector<double> xv = values_of(logits), yv = values_of(probs), pv = values_of(pos_weight),
                            wv = values_of(element_weight);
  double bce_sum = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double log_s = -std::log1p(std::exp(-xv[i])), log_1ms = -xv[i] - std::log1p(std::exp(-xv[i]));
    bce_sum += -wv[i / 4] * (pv[i % 4] * yv[i] * log_s + (1 - yv[i]) * log_1ms);
  }
  EXPECT_NEAR(want_bce, bce_sum / static_cast<double>(xv.size()), 1e-12);

  ASSERT_EQ(ce->buffers().size(), 1u);
  ASSERT_EQ(bce->buffers().size(), 2u);
  const Device dev = other_device();
  ce->to(dev);
  nll->to(dev);
  bce->to(dev);
  EXPECT_EQ(ce->buffers()[0].device(), dev);
  EXPECT_NEAR(ce->forward(logits.to(dev), target.to(dev)).item<double>(), want_ce, 1e-12);
  EXPECT_NEAR(nll->forward(log_probs.to(dev), target.to(dev)).item<double>(), want_nll, 1e-12);
  EXPECT_NEAR(bce->forward(logits.to(dev), probs.to(dev)).item<double>(), want_bce, 1e-12);
  EXPECT_NE(nll->str().find("NLLLoss"), std::string::npos) << nll->str();
}

}  // namespace
}  // namespace hwaro::test
