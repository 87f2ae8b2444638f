// cross_entropy's options together, as PyTorch combines them (class weights with ignore_index and
// label smoothing over spatial dims, class-probability targets), binary_cross_entropy on
// probabilities and the shapes of the binary losses' weights, against float64 references written
// out here.
#include <cmath>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;

// Row r of a [rows, classes] table: log_softmax in float64.
std::vector<double> log_softmax_row(const std::vector<double>& x, std::int64_t classes, std::int64_t r) {
  double m = -INFINITY, z = 0;
  for (std::int64_t c = 0; c < classes; ++c) m = std::max(m, x[r * classes + c]);
  for (std::int64_t c = 0; c < classes; ++c) z += std::exp(x[r * classes + c] - m);
  std::vector<double> out;
  for (std::int64_t c = 0; c < classes; ++c) out.push_back(x[r * classes + c] - m - std::log(z));
  return out;
}

// [N, C, D] -> [N * D, C] rows, position (n, d) at row n * D + d: the layout of a [N, D] target.
Tensor classes_last(const Tensor& x) { return x.permute({0, 2, 1}).contiguous().reshape({-1, x.size(1)}); }

// PyTorch's cross_entropy_loss_label_smoothing: (1 - e) * nll + e / C * sum_c -w_c log p_c, each
// zero at an ignored target; the mean divides both by the summed weights of the counted targets.
TEST(CrossEntropyOptions, WeightsIgnoreIndexAndSmoothingOverSpatialDims) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t n = 3, classes = 4, d = 5, ignored = 1;
  const Tensor logits = random_tensor({n, classes, d}, kFloat64, rng, -3, 3);
  Tensor target = random_tensor({n, d}, kInt64, rng, 0, classes - 1);
  target = where(random_tensor({n, d}, kBool, rng), target, ignored);
  const Tensor weight = random_tensor({classes}, kFloat64, rng, 0.2, 3);
  const std::vector<double> rows = values_of(classes_last(logits)), t = values_of(target), w = values_of(weight);
  for (double e : {0.0, 0.3}) {
    SCOPED_TRACE("label_smoothing " + std::to_string(e));
    std::vector<double> each;
    double sum = 0, nll_sum = 0, smooth_sum = 0, weight_sum = 0;
    for (std::int64_t r = 0; r < n * d; ++r) {
      const auto k = static_cast<std::int64_t>(t[r]);
      double nll = 0, smooth = 0;
      if (k != ignored) {
        const std::vector<double> lp = log_softmax_row(rows, classes, r);
        nll = -w[k] * lp[k];
        for (std::int64_t c = 0; c < classes; ++c) smooth -= w[c] * lp[c];
        weight_sum += w[k];
      }
      each.push_back((1 - e) * nll + e / classes * smooth);
      sum += each.back();
      nll_sum += nll;
      smooth_sum += smooth;
    }
    const double mean = weight_sum == 0 ? NAN : ((1 - e) * nll_sum + e / classes * smooth_sum) / weight_sum;
    F::CrossEntropyOptions options{.ignore_index = ignored, .label_smoothing = e, .weight = weight};
    EXPECT_TRUE(all_close({F::cross_entropy(logits, target, options).item<double>()}, {mean}, 1e-12, 1e-12));
    options.reduction = F::Reduction::Sum;
    EXPECT_NEAR(F::cross_entropy(logits, target, options).item<double>(), sum, 1e-10);
    options.reduction = F::Reduction::None;
    const Tensor none = F::cross_entropy(logits, target, options);
    ASSERT_EQ(none.sizes(), target.sizes());
    EXPECT_TRUE(all_close(values_of(none), each, 1e-12, 1e-12));
  }
}

TEST(CrossEntropyOptions, AnAllIgnoredBatchIsNaNAsPyTorchs) {
  const Tensor logits = randn({3, 4}, {.dtype = kFloat64});
  const Tensor target = full({3}, -100, {.dtype = kInt64});
  EXPECT_TRUE(std::isnan(F::cross_entropy(logits, target, {.label_smoothing = 0.2}).item<double>()));
  EXPECT_EQ(F::cross_entropy(logits, target, {.reduction = F::Reduction::Sum}).item<double>(), 0.0);
  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, tensor<std::int64_t>({0, 9, 1}), {.ignore_index = 5}); },
                                 "or be ignore_index, 5"));
}

// PyTorch's cross_entropy_loss_prob_target: -sum_c w_c t'_c log p_c with t' = (1 - e) t + e / C;
// the mean is over the N * D samples, whatever the weights.
TEST(CrossEntropyOptions, ClassProbabilityTargets) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t n = 2, classes = 3, d = 4;
  const Tensor logits = random_tensor({n, classes, d}, kFloat64, rng, -3, 3);
  const Tensor probs = random_tensor({n, classes, d}, kFloat64, rng, 0, 1).softmax(1);
  const Tensor weight = random_tensor({classes}, kFloat64, rng, 0.2, 3);
  const std::vector<double> rows = values_of(classes_last(logits)), t = values_of(classes_last(probs)),
                            w = values_of(weight);
  for (double e : {0.0, 0.25}) {
    SCOPED_TRACE("label_smoothing " + std::to_string(e));
    std::vector<double> each;
    double sum = 0;
    for (std::int64_t r = 0; r < n * d; ++r) {
      const std::vector<double> lp = log_softmax_row(rows, classes, r);
      double loss = 0;
      for (std::int64_t c = 0; c < classes; ++c) loss -= w[c] * ((1 - e) * t[r * classes + c] + e / classes) * lp[c];
      each.push_back(loss);
      sum += loss;
    }
    F::CrossEntropyOptions options{.label_smoothing = e, .weight = weight};
    EXPECT_NEAR(F::cross_entropy(logits, probs, options).item<double>(), sum / static_cast<double>(n * d), 1e-12);
    options.reduction = F::Reduction::None;
    const Tensor none = F::cross_entropy(logits, probs, options);
    ASSERT_EQ(none.sizes(), IntArrayRef({n, d}));
    EXPECT_TRUE(all_close(values_of(none), each, 1e-12, 1e-12));
  }
  // One sample [C] with its [C] probabilities, without weights.
  const Tensor one = logits.select(2, 0).select(0, 0), one_target = probs.select(2, 0).select(0, 0);
  const std::vector<double> lp = log_softmax_row(rows, classes, 0), p = values_of(one_target);
  EXPECT_NEAR(F::cross_entropy(one, one_target).item<double>(), -(p[0] * lp[0] + p[1] * lp[1] + p[2] * lp[2]), 1e-12);

  // The gradient reaches both the logits and the (soft) target, as PyTorch's.
  const Tensor x = random_tensor({4, 3}, kFloat64, rng).set_requires_grad(true);
  const Tensor y = random_tensor({4, 3}, kFloat64, rng, 0, 1).set_requires_grad(true);
  const auto r = autograd::gradcheck(
      [&](auto& v) { return F::cross_entropy(v[0], v[1], {.label_smoothing = 0.1, .weight = weight.select(0, 0) + weight}); },
      {x, y});
  EXPECT_TRUE(r.ok) << r.message;

  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, probs, {.ignore_index = 0}); }, "ignore_index"));
  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, probs.select(1, 0)); }, "class probabilities"));
  EXPECT_TRUE(throws_with<Error>([&] { F::cross_entropy(logits, probs, {.weight = weight.narrow(0, 0, 2)}); },
                                 "weight must have shape [3]"));
}

// PyTorch multiplies by pos_weight and weight in place, so a factor that would widen the loss
// (weight [N, 1] against logits [N]: an [N, N] loss and a wrong mean) is an error, not a broadcast.
TEST(BinaryCrossEntropyWithLogits, AWeightThatWouldWidenTheLossIsAnError) {
  const Tensor logits = randn({4}), target = rand({4});
  const auto bce = [&](const Tensor& pos_weight, const Tensor& weight) {
    return F::binary_cross_entropy_with_logits(logits, target, F::Reduction::Mean, pos_weight, weight);
  };
  EXPECT_TRUE(throws_with<Error>([&] { bce({}, ones({4, 1})); }, "weight of shape [4, 1] does not broadcast"));
  EXPECT_TRUE(throws_with<Error>([&] { bce(ones({2, 4}), {}); }, "pos_weight of shape [2, 4] does not broadcast"));
  EXPECT_TRUE(throws_with<Error>([&] { bce(ones({3}), {}); }, "does not broadcast to the input's shape [4]"));
  EXPECT_EQ(bce(ones({1}), full({4}, 2.0)).sizes(), IntArrayRef{});  // the ones that fit still do
  EXPECT_TRUE(throws_with<Error>(
      [&] { F::binary_cross_entropy_with_logits(tensor<std::int64_t>({1, 2}), tensor({1.f, 0.f})); }, "floating point"));
  EXPECT_TRUE(throws_with<Error>([&] { F::nll_loss(tensor<std::int64_t>({{1, 2}}), tensor<std::int64_t>({0})); },
                                 "floating point"));
}

// PyTorch's binary_cross_entropy: -w [y max(log p, -100) + (1 - y) max(log(1 - p), -100)].
TEST(BinaryCrossEntropy, MatchesPyTorchsClampedFormula) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Saturated probabilities (exactly 0 and 1) among the random ones.
  const Tensor probs = cat({tensor({0.0, 1.0, 0.0, 1.0}), random_tensor({8}, kFloat64, rng, 0, 1)}).reshape({3, 4});
  const Tensor target = random_tensor({3, 4}, kFloat64, rng, 0, 1);
  const Tensor weight = random_tensor({1, 4}, kFloat64, rng, 0.2, 2);
  const std::vector<double> p = values_of(probs), y = values_of(target), w = values_of(weight);
  std::vector<double> each;
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    each.push_back(-w[i % 4] * (y[i] * std::max(std::log(p[i]), -100.0) + (1 - y[i]) * std::max(std::log(1 - p[i]), -100.0)));
    sum += each.back();
  }
  EXPECT_TRUE(all_close(values_of(F::binary_cross_entropy(probs, target, F::Reduction::None, weight)), each, 1e-12, 1e-12));
  EXPECT_NEAR(F::binary_cross_entropy(probs, target, F::Reduction::Sum, weight).item<double>(), sum, 1e-9);
  EXPECT_NEAR(F::binary_cross_entropy(probs, target, F::Reduction::Mean, weight).item<double>(), sum / 12, 1e-10);

  // Inside (0, 1) the gradient is PyTorch's w (p - y) / (p (1 - p)), for the probabilities and the target.
  const Tensor inside = random_tensor({3, 4}, kFloat64, rng, 0.05, 0.95).set_requires_grad(true);
  const auto r = autograd::gradcheck(
      [&](auto& v) { return F::binary_cross_entropy(v[0], v[1], F::Reduction::Mean, weight); },
      {inside, target.clone().set_requires_grad(true)});
  EXPECT_TRUE(r.ok) << r.message;
  // Everywhere, saturated probabilities included, the probabilities' gradient is PyTorch's
  // w (p - y) / max(p (1 - p), 1e-12) / count (mean): finite, and at p = 0 pointing out of saturation.
  const Tensor saturated = probs.clone().set_requires_grad(true);
  F::binary_cross_entropy(saturated, target, F::Reduction::Mean, weight).backward();
  std::vector<double> want_grad;
  for (std::size_t i = 0; i < p.size(); ++i) {
    want_grad.push_back(w[i % 4] * (p[i] - y[i]) / std::max(p[i] * (1 - p[i]), 1e-12) / 12.0);
  }
  EXPECT_TRUE(all_close(values_of(saturated.grad()), want_grad, 1e-12, 1e-12));

  nn::BCELoss module(F::Reduction::Sum, weight);
  EXPECT_EQ(module->forward(probs, target).item<double>(),
            F::binary_cross_entropy(probs, target, F::Reduction::Sum, weight).item<double>());
  ASSERT_EQ(module->buffers().size(), 1u);
  module->to(other_device());
  EXPECT_EQ(module->buffers()[0].device(), other_device());
}

// PyTorch's gradient at the saturated ends, written out: (p - y) / max(p (1 - p), 1e-12) for
// p = 0, 1, 1e-13 and 0.5 (the clamped logs' derivative would be +0.7, -0.3, -2.9e12 and 1.2).
TEST(BinaryCrossEntropy, TheGradientAtSaturationIsPyTorchs) {
  const Tensor p = tensor({0.0, 1.0, 1e-13, 0.5}).set_requires_grad(true);
  const Tensor y = tensor({0.3, 0.3, 0.3, 0.2});
  F::binary_cross_entropy(p, y, F::Reduction::Sum).backward();
  EXPECT_TRUE(all_close(values_of(p.grad()), {-3e11, 7e11, (1e-13 - 0.3) / 1e-12, 1.2}, 1e-12, 0));
}

// In float16 1e-12 is 0 and the slope near saturation overflows; computed in float32 the loss
// is finite and the gradient is the formula's, rounded to float16 (where it fits).
TEST(BinaryCrossEntropy, SixteenBitProbabilitiesGiveAFiniteLoss) {
  for (DType dt : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor p = tensor({0.0, 1.0, 1e-3, 0.5}).to(dt).set_requires_grad(true);
    const Tensor y = tensor({0.0, 1.0, 1.0, 0.2}).to(dt);
    const Tensor loss = F::binary_cross_entropy(p, y, F::Reduction::None);
    EXPECT_EQ(loss.dtype(), dt);
    const std::vector<double> ps = values_of(p), got = values_of(loss);
    const std::vector<double> ys = values_of(y);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const double want = -(ys[i] * std::max(std::log(ps[i]), -100.0) + (1 - ys[i]) * std::max(std::log(1 - ps[i]), -100.0));
      EXPECT_NEAR(got[i], want, 0.02 * std::abs(want) + 1e-3) << ps[i];
    }
    loss.sum().backward();
    const std::vector<double> g = values_of(p.grad());
    EXPECT_EQ(g[0], 0.0);  // p = y = 0
    EXPECT_EQ(g[1], 0.0);  // p = y = 1
    EXPECT_NEAR(g[2], (ps[2] - 1.0) / (ps[2] * (1 - ps[2])), 0.02 / ps[2]);
    EXPECT_NEAR(g[3], 0.3 / 0.25, 0.02);
  }
}

TEST(BinaryCrossEntropy, BadInputsAreClearErrors) {
  const Tensor target = tensor({1.f, 0.f, 1.f});
  for (float bad : {-0.1f, 1.5f, NAN}) {
    EXPECT_TRUE(throws_with<Error>([&] { F::binary_cross_entropy(tensor({0.5f, bad, 0.5f}), target); },
                                   "between 0 and 1"));
  }
  for (float bad : {-0.1f, 1.5f, NAN}) {
    EXPECT_TRUE(throws_with<Error>([&] { F::binary_cross_entropy(tensor({0.5f, 0.5f, 0.5f}), tensor({1.f, bad, 0.f})); },
                                   "all elements of target should be between 0 and 1"));
  }
  EXPECT_TRUE(throws_with<Error>([&] { F::binary_cross_entropy(tensor({0.5f, 0.5f}), target); }, "differ"));
  EXPECT_TRUE(throws_with<Error>(
      [&] { F::binary_cross_entropy(tensor({0.5f, 0.5f, 0.5f}), target, F::Reduction::Mean, ones({3, 1})); },
      "does not broadcast"));
}

}  // namespace
}  // namespace hwaro::test
