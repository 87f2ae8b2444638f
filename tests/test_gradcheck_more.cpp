// Gradients by finite differences (contiguous and non-contiguous inputs) of the ops test_gradcheck
// leaves out: linear, dropout, chunk, amin, max(dim), mean(), expand_as, view_as, to(dtype),
// pow(Scalar, Tensor), where with a Scalar, norm p=1/inf/3/0.5/-inf, the losses' options and
// cross_entropy over [N, C, d] (values against float64 references too), conv/pool/norm/embedding
// on non-contiguous inputs, and conv2d, layer_norm, batch_norm without their optional parameters.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Tolerance {
  double eps = 1e-6, atol = 1e-6, rtol = 1e-4;
};

// Gradchecks fn on inputs laid out as given (contiguous) and as non-contiguous copies.
void expect_gradcheck_both_layouts(const std::string& name, const Fn& fn, const std::vector<Tensor>& inputs,
                                   Tolerance tol = {}) {
  for (bool strided : {false, true}) {
    std::vector<Tensor> in;
    for (const Tensor& t : inputs) {
      Tensor c = strided ? non_contiguous_copy(t) : t.clone();
      c.set_requires_grad(true);
      in.push_back(c);
    }
    const autograd::GradcheckResult r = autograd::gradcheck(fn, in, tol.eps, tol.atol, tol.rtol);
    EXPECT_TRUE(r.ok) << name << (strided ? " (non-contiguous inputs): " : " (contiguous inputs): ") << r.message;
  }
}

// Gradchecks fn on non-contiguous copies of inputs only (the contiguous case is tested elsewhere).
void expect_gradcheck_non_contiguous(const std::string& name, const Fn& fn, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> in;
  for (const Tensor& t : inputs) {
    Tensor c = non_contiguous_copy(t);
    EXPECT_FALSE(c.is_contiguous()) << name;
    c.set_requires_grad(true);
    in.push_back(c);
  }
  const autograd::GradcheckResult r = autograd::gradcheck(fn, in);
  EXPECT_TRUE(r.ok) << name << " (non-contiguous inputs): " << r.message;
}

// float64 values of distinct magnitudes in [0.5, 2.5), at least 2/numel apart, with random signs,
// shuffled: no ties for max/min/norm(inf), and |x| far from its kink at 0.
Tensor spread_tensor(const std::vector<std::int64_t>& sizes, std::mt19937_64& rng) {
  std::int64_t n = 1;
  for (std::int64_t s : sizes) n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  std::bernoulli_distribution negative(0.5);
  for (std::int64_t k = 0; k < n; ++k) {
    v[static_cast<std::size_t>(k)] = (negative(rng) ? -1.0 : 1.0) * (0.5 + 2.0 * static_cast<double>(k) / static_cast<double>(n));
  }
  std::shuffle(v.begin(), v.end(), rng);
  return tensor(v, sizes);
}

class GradcheckMore : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = fresh_seed();
    rng_.seed(seed_);
  }
  Tensor rand64(const std::vector<std::int64_t>& sizes, double lo = -2.0, double hi = 2.0) {
    return random_tensor(sizes, kFloat64, rng_, lo, hi);
  }
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

// ---------------------------------------------------------------- linear and dropout

TEST_F(GradcheckMore, LinearWithAndWithoutBiasOn2dAnd3dInputs) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("linear 2-D with bias", [](auto& v) { return F::linear(v[0], v[1], v[2]); },
                                {rand64({4, 5}), rand64({3, 5}), rand64({3})});
  expect_gradcheck_both_layouts("linear 3-D with bias", [](auto& v) { return F::linear(v[0], v[1], v[2]); },
                                {rand64({2, 3, 5}), rand64({4, 5}), rand64({4})});
  expect_gradcheck_both_layouts("linear 2-D without bias", [](auto& v) { return F::linear(v[0], v[1]); },
                                {rand64({4, 5}), rand64({3, 5})});
  expect_gradcheck_both_layouts("linear 3-D without bias", [](auto& v) { return F::linear(v[0], v[1]); },
                                {rand64({2, 3, 5}), rand64({4, 5})});
}

TEST_F(GradcheckMore, DropoutInTrainingWithTheGeneratorReseededEachCall) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const std::uint64_t mask_seed = seed_ ^ 0x9e3779b97f4a7c15ULL;
  // Reseeding before every call makes each evaluation draw the same mask, so dropout is a fixed
  // linear map that finite differences can check.
  expect_gradcheck_both_layouts("dropout p=0.3",
                                [mask_seed](auto& v) {
                                  manual_seed(mask_seed);
                                  return F::dropout(v[0], 0.3, true);
                                },
                                {rand64({4, 6})});
  expect_gradcheck_both_layouts("dropout p=0.5 3-D",
                                [mask_seed](auto& v) {
                                  manual_seed(mask_seed + 1);
                                  return F::dropout(v[0] * v[0], 0.5, true);
                                },
                                {rand64({2, 3, 4})});
}

TEST_F(GradcheckMore, DropoutGradientIsExactlyTheMaskOverOneMinusP) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const double p = 0.3;
  for (bool strided : {false, true}) {
    SCOPED_TRACE(strided ? "non-contiguous input" : "contiguous input");
    Tensor x = rand64({20, 30}, 0.5, 2.0);  // never 0, so a zero output means a dropped element
    if (strided) x = non_contiguous_copy(x);
    x.set_requires_grad(true);
    manual_seed(seed_);
    const Tensor y = F::dropout(x, p, true);
    y.sum().backward();
    ASSERT_TRUE(x.grad().defined());
    const std::vector<double> xs = values_of(x), ys = values_of(y), g = values_of(x.grad());
    const double scale = 1.0 / (1.0 - p);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (ys[i] == 0.0) {
        ASSERT_EQ(g[i], 0.0) << "dropped element " << i;
      } else {
        ++kept;
        ASSERT_EQ(g[i], scale) << "kept element " << i;
        ASSERT_NEAR(ys[i], xs[i] * scale, 1e-15 * std::abs(ys[i])) << "kept element " << i;
      }
    }
    // 600 draws keep 70% of them; 0.55 and 0.85 are about 8 standard deviations away.
    const double fraction = static_cast<double>(kept) / static_cast<double>(xs.size());
    EXPECT_GT(fraction, 0.55);
    EXPECT_LT(fraction, 0.85);
  }
}

// ---------------------------------------------------------------- views, reductions, conversions

TEST_F(GradcheckMore, ChunkIntoUnevenPieces) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("chunk dim 1 (3, 3, 1)",
                                [](auto& v) {
                                  const auto p = v[0].chunk(3, 1);
                                  EXPECT_EQ(p.size(), 3u);
                                  return cat({p[2] * 3.0, p[0] * p[1]}, 1);
                                },
                                {rand64({4, 7})});
  expect_gradcheck_both_layouts("chunk dim 0 (free function)",
                                [](auto& v) {
                                  const auto p = chunk(v[0], 2, 0);
                                  return p[0] * p[0].sum() - p[1];
                                },
                                {rand64({6, 3})});
}

TEST_F(GradcheckMore, AminAndMaxAlongADim) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("amin dim 1", [](auto& v) { return v[0].amin({1}); }, {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("amin dims 0,2 keepdim", [](auto& v) { return v[0].amin({0, 2}, true); },
                                {spread_tensor({2, 3, 4}, rng_)});
  expect_gradcheck_both_layouts("max dim 1 values", [](auto& v) { return std::get<0>(v[0].max(1)); },
                                {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("max dim 0 keepdim values", [](auto& v) { return std::get<0>(v[0].max(0, true)); },
                                {spread_tensor({4, 3, 2}, rng_)});
}

TEST_F(GradcheckMore, MeanOverAllElements) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("mean()", [](auto& v) { return v[0].mean(); }, {rand64({3, 4})});
  expect_gradcheck_both_layouts("mean() of a product", [](auto& v) { return (v[0] * v[0]).mean(); },
                                {rand64({2, 3, 5})});
}

TEST_F(GradcheckMore, ExpandAsAndViewAs) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const Tensor big = zeros({2, 3, 5, 4}, {.dtype = kFloat64});
  expect_gradcheck_both_layouts("expand_as", [&](auto& v) { return v[0].expand_as(big) * 1.5; }, {rand64({3, 1, 4})});
  const Tensor wide = zeros({2, 6}, {.dtype = kFloat64}), tall = zeros({4, 3}, {.dtype = kFloat64});
  expect_gradcheck_both_layouts("view_as [2, 6]", [&](auto& v) { return v[0].view_as(wide) * 2.0; }, {rand64({3, 4})});
  expect_gradcheck_both_layouts("view_as [4, 3] then square", [&](auto& v) {
    const Tensor r = v[0].view_as(tall);
    return r * r;
  }, {rand64({3, 4})});
}

TEST_F(GradcheckMore, ToDtype) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("to(float64) from float64", [](auto& v) { return v[0].to(kFloat64) * v[0]; },
                                {rand64({3, 4})});
  expect_gradcheck_both_layouts("to(float64, copy) from float64",
                                [](auto& v) { return v[0].to(kFloat64, /*copy=*/true) * 3.0; }, {rand64({3, 4})});
  // Through float32 and back: float32 rounding (~1e-7) over a 2e-3 difference step needs loose tolerances.
  expect_gradcheck_both_layouts("float64 -> float32 -> float64",
                                [](auto& v) {
                                  const Tensor f = v[0].to(kFloat32);
                                  return (f * f).to(kFloat64);
                                },
                                {rand64({3, 4})}, Tolerance{1e-3, 1e-3, 1e-3});
  // The gradient arrives back in the input's dtype.
  Tensor x = rand64({5}).set_requires_grad(true);
  (x.to(kFloat32) * 2.0f).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  EXPECT_EQ(values_of(x.grad()), std::vector<double>(5, 2.0));
}

TEST_F(GradcheckMore, PowScalarBaseTensorExponent) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("pow(2.5, x)", [](auto& v) { return pow(2.5, v[0]); }, {rand64({3, 4})});
  expect_gradcheck_both_layouts("pow(0.4, x * y)", [](auto& v) { return pow(0.4, v[0] * v[1]); },
                                {rand64({3, 4}), rand64({4})});
  const Tensor x = rand64({6});
  const std::vector<double> xs = values_of(x);
  std::vector<double> expected;
  for (double e : xs) expected.push_back(std::pow(2.5, e));
  EXPECT_TRUE(all_close(values_of(pow(2.5, x)), expected, 1e-14, 0));
}

TEST_F(GradcheckMore, WhereWithAScalarOperand) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const Tensor mask = random_tensor({3, 4}, kBool, rng_);
  expect_gradcheck_both_layouts("where(mask, scalar, x)", [&](auto& v) { return where(mask, 1.5, v[0]); },
                                {rand64({3, 4})});
  expect_gradcheck_both_layouts("where(mask, x, scalar)", [&](auto& v) { return where(mask, v[0], -0.5); },
                                {rand64({3, 4})});
  expect_gradcheck_both_layouts("where(mask, x broadcast, scalar)",
                                [&](auto& v) { return where(mask, v[0] * v[0], 2.0); }, {rand64({4})});
  // The values pick the scalar where the mask says so.
  const Tensor x = rand64({3, 4});
  const std::vector<double> m = values_of(mask), xs = values_of(x), got = values_of(where(mask, 1.5, x));
  for (std::size_t i = 0; i < m.size(); ++i) EXPECT_EQ(got[i], m[i] != 0 ? 1.5 : xs[i]) << "element " << i;
}

TEST_F(GradcheckMore, NormWithPOneAndInfinity) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const double inf = std::numeric_limits<double>::infinity();
  expect_gradcheck_both_layouts("norm p=1 all", [](auto& v) { return v[0].norm(1); }, {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=1 dim 1", [](auto& v) { return v[0].norm(1, {1}); },
                                {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=inf all", [&](auto& v) { return v[0].norm(inf); },
                                {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=inf dim 0 keepdim", [&](auto& v) { return v[0].norm(inf, {0}, true); },
                                {spread_tensor({4, 3, 2}, rng_)});
}

// The general p branch, (sum |x|^p)^(1/p), above and below 1, and p = -inf (the smallest |x|).
// spread_tensor keeps |x| >= 0.5, away from the kink of |x|^p at 0 (infinite slope for p < 1).
TEST_F(GradcheckMore, NormWithOtherOrders) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const double inf = std::numeric_limits<double>::infinity();
  expect_gradcheck_both_layouts("norm p=3 all", [](auto& v) { return v[0].norm(3); }, {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=3 dim 1", [](auto& v) { return v[0].norm(3, {1}); },
                                {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=0.5 all", [](auto& v) { return v[0].norm(0.5); },
                                {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=0.5 dim 0 keepdim", [](auto& v) { return v[0].norm(0.5, {0}, true); },
                                {spread_tensor({4, 3, 2}, rng_)});
  expect_gradcheck_both_layouts("norm p=-inf all", [&](auto& v) { return v[0].norm(-inf); },
                                {spread_tensor({3, 5}, rng_)});
  expect_gradcheck_both_layouts("norm p=-inf dims 0, 2", [&](auto& v) { return v[0].norm(-inf, {0, 2}); },
                                {spread_tensor({4, 3, 2}, rng_)});
}

// ---------------------------------------------------------------- losses' options

// log_softmax of each row of x [n, c] in float64.
std::vector<double> reference_log_softmax(const std::vector<double>& x, std::int64_t n, std::int64_t c) {
  std::vector<double> out(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t k = 0; k < c; ++k) m = std::max(m, x[i * c + k]);
    double z = 0;
    for (std::int64_t k = 0; k < c; ++k) z += std::exp(x[i * c + k] - m);
    for (std::int64_t k = 0; k < c; ++k) out[i * c + k] = x[i * c + k] - m - std::log(z);
  }
  return out;
}

struct ReferenceLoss {
  std::vector<double> per_sample;  // reduction None
  double sum = 0;                  // reduction Sum
  double mean = 0;                 // reduction Mean
};

// A float64 loss against its reference under the reduction it was computed with.
void expect_loss_matches(const Tensor& got, const ReferenceLoss& want, F::Reduction reduction) {
  if (reduction == F::Reduction::None) {
    EXPECT_TRUE(all_close(values_of(got), want.per_sample, 1e-12, 1e-12)) << "reduction None";
    return;
  }
  const double expected = reduction == F::Reduction::Mean ? want.mean : want.sum;
  EXPECT_NEAR(got.item<double>(), expected, 1e-12 * std::max(1.0, std::abs(expected)))
      << (reduction == F::Reduction::Mean ? "reduction Mean" : "reduction Sum");
}

// PyTorch's cross entropy on log-probabilities lp [n, c]: sample i with counted target t adds
// (1 - e) * w[t] * -lp[i, t] + e / c * sum_k w[k] * -lp[i, k]; ignored samples add 0; the mean
// divides the sum by the sum of w[t] over the counted targets. weight empty: all ones.
ReferenceLoss reference_nll(const std::vector<double>& lp, std::int64_t n, std::int64_t c,
                            const std::vector<double>& target, const std::vector<double>& weight,
                            std::int64_t ignore_index, double smoothing) {
  const auto w = [&](std::int64_t k) { return weight.empty() ? 1.0 : weight[static_cast<std::size_t>(k)]; };
  ReferenceLoss r;
  double denominator = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto t = static_cast<std::int64_t>(target[static_cast<std::size_t>(i)]);
    if (t == ignore_index) {
      r.per_sample.push_back(0.0);
      continue;
    }
    double smooth = 0;
    for (std::int64_t k = 0; k < c; ++k) smooth += w(k) * -lp[i * c + k];
    const double loss = (1 - smoothing) * w(t) * -lp[i * c + t] + smoothing / static_cast<double>(c) * smooth;
    r.per_sample.push_back(loss);
    r.sum += loss;
    denominator += w(t);
  }
  r.mean = r.sum / denominator;
  return r;
}

struct CeCase {
  std::string name;
  bool weighted;
  std::int64_t ignore_index;  // -100: PyTorch's default
  bool targets_ignored;       // put ignore_index into some targets
  double smoothing;
};

TEST_F(GradcheckMore, CrossEntropyOptionsMatchReferenceAndFiniteDifferences) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  constexpr std::int64_t n = 7, c = 5;
  const std::vector<CeCase> cases = {
      {"weight", true, -100, false, 0.0},
      {"ignore_index -100", false, -100, true, 0.0},
      {"ignore_index 2 (a class)", false, 2, true, 0.0},
      {"label_smoothing", false, -100, false, 0.15},
      {"weight + ignore_index + label_smoothing", true, 3, true, 0.2},
  };
  for (const CeCase& cc : cases) {
    SCOPED_TRACE(cc.name);
    const Tensor logits = rand64({n, c}, -3, 3);
    std::vector<double> tv = values_of(random_tensor({n}, kInt64, rng_, 0, c - 1));
    if (cc.targets_ignored) {
      tv[1] = static_cast<double>(cc.ignore_index);
      tv[4] = static_cast<double>(cc.ignore_index);
    }
    tv[0] = cc.ignore_index == 0 ? 1.0 : 0.0;  // at least one counted target
    std::vector<std::int64_t> ti(tv.begin(), tv.end());
    const Tensor target = tensor(ti);
    F::CrossEntropyOptions options;
    options.ignore_index = cc.ignore_index;
    options.label_smoothing = cc.smoothing;
    std::vector<double> wv;
    if (cc.weighted) {
      options.weight = rand64({c}, 0.2, 2.0);
      wv = values_of(options.weight);
    }
    const ReferenceLoss want =
        reference_nll(reference_log_softmax(values_of(logits), n, c), n, c, tv, wv, cc.ignore_index, cc.smoothing);
    for (F::Reduction reduction : {F::Reduction::Mean, F::Reduction::Sum, F::Reduction::None}) {
      options.reduction = reduction;
      expect_loss_matches(F::cross_entropy(logits, target, options), want, reduction);
      expect_gradcheck_both_layouts(cc.name, [&](auto& v) { return F::cross_entropy(v[0], target, options); },
                                    {logits});
    }
  }
}

// Logits [N, C, d] with targets [N, d]: the class dim is dim 1, each (n, j) position one sample.
// The reference takes the rows out of the logits' values by hand; the gradient is checked by
// finite differences on the 3-D logits themselves.
TEST_F(GradcheckMore, CrossEntropyWithASpatialDimMatchesReferenceAndFiniteDifferences) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  constexpr std::int64_t n = 3, c = 4, d = 5;
  const Tensor logits = rand64({n, c, d}, -3, 3);
  const std::vector<double> tv = values_of(random_tensor({n, d}, kInt64, rng_, 0, c - 1));
  const Tensor target = tensor(std::vector<std::int64_t>(tv.begin(), tv.end()), {n, d});
  const std::vector<double> x = values_of(logits);
  std::vector<double> rows;  // [n * d, c]: row i * d + j holds logits[i, :, j]
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < d; ++j) {
      for (std::int64_t k = 0; k < c; ++k) rows.push_back(x[static_cast<std::size_t>((i * c + k) * d + j)]);
    }
  }
  F::CrossEntropyOptions options;
  options.label_smoothing = 0.1;
  const ReferenceLoss want = reference_nll(reference_log_softmax(rows, n * d, c), n * d, c, tv, {}, -100, 0.1);
  for (F::Reduction reduction : {F::Reduction::Mean, F::Reduction::Sum, F::Reduction::None}) {
    options.reduction = reduction;
    const Tensor got = F::cross_entropy(logits, target, options);
    if (reduction == F::Reduction::None) {
      EXPECT_EQ(got.sizes(), IntArrayRef({n, d}));
    }
    expect_loss_matches(got, want, reduction);
    expect_gradcheck_both_layouts("cross_entropy [N, C, d]",
                                  [&](auto& v) { return F::cross_entropy(v[0], target, options); }, {logits});
  }
}

TEST_F(GradcheckMore, NllLossWithWeightMatchesReferenceAndFiniteDifferences) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  constexpr std::int64_t n = 6, c = 4;
  for (bool with_ignore : {false, true}) {
    SCOPED_TRACE(with_ignore ? "weight + ignore_index 1" : "weight");
    const Tensor log_probs = rand64({n, c}, -3, 3).log_softmax(1);
    std::vector<double> tv = values_of(random_tensor({n}, kInt64, rng_, 0, c - 1));
    tv[0] = 0;
    if (with_ignore) tv[2] = tv[5] = 1;
    std::vector<std::int64_t> ti(tv.begin(), tv.end());
    const Tensor target = tensor(ti);
    F::CrossEntropyOptions options;
    options.weight = rand64({c}, 0.2, 2.0);
    if (with_ignore) options.ignore_index = 1;
    const ReferenceLoss want =
        reference_nll(values_of(log_probs), n, c, tv, values_of(options.weight), options.ignore_index, 0.0);
    for (F::Reduction reduction : {F::Reduction::Mean, F::Reduction::Sum, F::Reduction::None}) {
      options.reduction = reduction;
      expect_loss_matches(F::nll_loss(log_probs, target, options), want, reduction);
      expect_gradcheck_both_layouts("nll_loss weight", [&](auto& v) { return F::nll_loss(v[0], target, options); },
                                    {log_probs});
      expect_gradcheck_both_layouts("nll_loss weight through log_softmax",
                                    [&](auto& v) { return F::nll_loss(v[0].log_softmax(1), target, options); },
                                    {rand64({n, c})});
    }
  }
}

TEST_F(GradcheckMore, BinaryCrossEntropyWithLogitsPosWeightMatchesReferenceAndFiniteDifferences) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  constexpr std::int64_t n = 6, c = 4;
  const Tensor logits = rand64({n, c}, -4, 4);
  const Tensor target = rand64({n, c}, 0, 1);
  const Tensor pos_weight = rand64({c}, 0.3, 3.0);  // broadcast over the batch, per class
  // PyTorch: (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x), with log(1 + e^-x) = max(-x, 0) + log1p(e^-|x|).
  const std::vector<double> x = values_of(logits), y = values_of(target), pw = values_of(pos_weight);
  std::vector<double> per_element;
  double sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double softplus_neg = std::max(-x[i], 0.0) + std::log1p(std::exp(-std::abs(x[i])));
    const double l = (1 - y[i]) * x[i] + (1 + (pw[i % c] - 1) * y[i]) * softplus_neg;
    per_element.push_back(l);
    sum += l;
  }
  EXPECT_TRUE(all_close(values_of(F::binary_cross_entropy_with_logits(logits, target, F::Reduction::None, pos_weight)),
                        per_element, 1e-12, 1e-12));
  EXPECT_NEAR(F::binary_cross_entropy_with_logits(logits, target, F::Reduction::Sum, pos_weight).item<double>(), sum,
              1e-12 * sum);
  EXPECT_NEAR(F::binary_cross_entropy_with_logits(logits, target, F::Reduction::Mean, pos_weight).item<double>(),
              sum / static_cast<double>(x.size()), 1e-12 * sum);
  for (F::Reduction reduction : {F::Reduction::Mean, F::Reduction::None}) {
    expect_gradcheck_both_layouts("bce_with_logits pos_weight (logits and pos_weight)",
                                  [&](auto& v) { return F::binary_cross_entropy_with_logits(v[0], target, reduction, v[1]); },
                                  {logits, pos_weight});
  }
}

// ---------------------------------------------------------------- layers on non-contiguous inputs

TEST_F(GradcheckMore, Conv2dOnNonContiguousInputs) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_non_contiguous("conv2d 3x3 pad 1",
                                  [](auto& v) { return F::conv2d(v[0], v[1], v[2], {1}, {1}); },
                                  {rand64({2, 3, 6, 5}), rand64({4, 3, 3, 3}), rand64({4})});
  expect_gradcheck_non_contiguous("conv2d groups 2 stride 2 dilation 2",
                                  [](auto& v) { return F::conv2d(v[0], v[1], v[2], {2}, {1}, {2}, 2); },
                                  {rand64({1, 4, 7, 6}), rand64({2, 2, 2, 3}), rand64({2})});
}

// The optional parameters left out: conv2d without a bias, layer_norm and batch_norm without
// weight and bias (training, and eval with running statistics).
TEST_F(GradcheckMore, LayersWithoutBiasOrAffineParameters) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_both_layouts("conv2d without bias", [](auto& v) { return F::conv2d(v[0], v[1], {}, {1}, {1}); },
                                {rand64({2, 3, 5, 4}), rand64({2, 3, 3, 2})});
  expect_gradcheck_both_layouts("conv2d without bias, stride 2, dilation 2, groups 2",
                                [](auto& v) { return F::conv2d(v[0], v[1], {}, {2}, {1}, {2}, 2); },
                                {rand64({1, 4, 7, 6}), rand64({4, 2, 2, 3})});
  expect_gradcheck_both_layouts("layer_norm without weight and bias", [](auto& v) { return F::layer_norm(v[0], {4, 5}); },
                                {rand64({3, 4, 5})});
  expect_gradcheck_both_layouts("batch_norm training without weight and bias",
                                [](auto& v) { return F::batch_norm(v[0], {}, {}, {}, {}, true); }, {rand64({4, 3, 2, 3})});
  const Tensor running_mean = rand64({3}), running_var = rand64({3}, 0.5, 2.0);
  expect_gradcheck_both_layouts("batch_norm eval without weight and bias",
                                [&](auto& v) { return F::batch_norm(v[0], running_mean, running_var, {}, {}, false); },
                                {rand64({4, 3, 2})});
}

TEST_F(GradcheckMore, PoolingOnNonContiguousInputs) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_non_contiguous("max_pool2d 3x3 stride 2 pad 1",
                                  [](auto& v) { return F::max_pool2d(v[0], {3}, {2}, {1}); },
                                  {spread_tensor({2, 2, 6, 7}, rng_)});
  expect_gradcheck_non_contiguous("max_pool2d 2x2 ceil_mode",
                                  [](auto& v) { return F::max_pool2d(v[0], {2}, {2}, {0}, {1}, true); },
                                  {spread_tensor({1, 3, 5, 5}, rng_)});
  expect_gradcheck_non_contiguous("avg_pool2d 2x2", [](auto& v) { return F::avg_pool2d(v[0], {2}); },
                                  {rand64({2, 2, 6, 6})});
  expect_gradcheck_non_contiguous(
      "avg_pool2d 3x2 stride 2,1 pad 1,0 ceil_mode no pad count",
      [](auto& v) { return F::avg_pool2d(v[0], {3, 2}, {2, 1}, {1, 0}, true, false); }, {rand64({1, 2, 7, 5})});
}

TEST_F(GradcheckMore, NormalisationAndEmbeddingOnNonContiguousInputs) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  expect_gradcheck_non_contiguous("batch_norm training",
                                  [](auto& v) { return F::batch_norm(v[0], {}, {}, v[1], v[2], true); },
                                  {rand64({4, 3, 2, 3}), rand64({3}), rand64({3})});
  const Tensor running_mean = zeros({3}, {.dtype = kFloat64}), running_var = ones({3}, {.dtype = kFloat64});
  expect_gradcheck_non_contiguous(
      "batch_norm training with running statistics",
      [&](auto& v) { return F::batch_norm(v[0], running_mean, running_var, v[1], v[2], true, 0.2); },
      {rand64({5, 3}), rand64({3}), rand64({3})});
  expect_gradcheck_non_contiguous("layer_norm over [4, 5]",
                                  [](auto& v) { return F::layer_norm(v[0], {4, 5}, v[1], v[2]); },
                                  {rand64({3, 4, 5}), rand64({4, 5}), rand64({4, 5})});
  const Tensor idx = non_contiguous_copy(tensor<std::int64_t>({{0, 5, 2}, {2, 2, 1}}));
  ASSERT_FALSE(idx.is_contiguous());
  expect_gradcheck_non_contiguous("embedding", [&](auto& v) { return F::embedding(idx, v[0]); }, {rand64({6, 3})});
}

}  // namespace
}  // namespace hwaro::test
