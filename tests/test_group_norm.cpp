// group_norm and GroupNorm against a float64 loop on fresh random inputs (several group counts,
// 2-D to 5-D inputs, with and without the affine parameters), gradients by finite differences,
// the module's parameters, printout and train/eval independence, and errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = nn::functional;

// x as [n, c, inner]: each (sample, group) normalised over its c / groups channels and inner
// positions with the biased variance, then scaled and shifted per channel (empty w, b: none).
// `conditioning` (when given) receives, per element, |w| * max |x| of its group / its std: the
// factor by which a rounding of the inputs' scale, as in the mean, reaches the output. A group of
// two nearly equal values has a small std, and a float32 result can be no closer than that.
std::vector<double> group_norm_ref(const std::vector<double>& x, std::int64_t n, std::int64_t c, std::int64_t inner,
                                   std::int64_t groups, const std::vector<double>& w, const std::vector<double>& b,
                                   double eps, std::vector<double>* conditioning = nullptr) {
  if (conditioning != nullptr) conditioning->assign(x.size(), 0.0);
  std::vector<double> out(x.size());
  const std::int64_t per_group = c / groups;
  for (std::int64_t s = 0; s < n; ++s) {
    for (std::int64_t g = 0; g < groups; ++g) {
      const auto at = [&](std::int64_t ch, std::int64_t i) { return (s * c + ch) * inner + i; };
      double mean = 0, var = 0;
      const double count = static_cast<double>(per_group * inner);
      for (std::int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch)
        for (std::int64_t i = 0; i < inner; ++i) mean += x[at(ch, i)];
      mean /= count;
      for (std::int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch)
        for (std::int64_t i = 0; i < inner; ++i) var += (x[at(ch, i)] - mean) * (x[at(ch, i)] - mean);
      var /= count;
      double largest = 0;
      for (std::int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch)
        for (std::int64_t i = 0; i < inner; ++i) largest = std::max(largest, std::abs(x[at(ch, i)]));
      for (std::int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch) {
        for (std::int64_t i = 0; i < inner; ++i) {
          double y = (x[at(ch, i)] - mean) / std::sqrt(var + eps);
          if (!w.empty()) y *= w[ch];
          if (!b.empty()) y += b[ch];
          out[at(ch, i)] = y;
          if (conditioning != nullptr) {
            (*conditioning)[at(ch, i)] = (w.empty() ? 1.0 : std::abs(w[ch])) * largest / std::sqrt(var + eps);
          }
        }
      }
    }
  }
  return out;
}

struct Shape {
  std::vector<std::int64_t> sizes;
  std::int64_t groups;
};

TEST(GroupNorm, MatchesTheFloat64Reference) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<Shape> shapes = {
      {{3, 6}, 3}, {{2, 6, 5}, 2}, {{2, 8, 3, 4}, 4}, {{1, 4, 2, 3, 2}, 1}, {{2, 6, 3, 3}, 6}, {{4, 4, 1, 1}, 2},
  };
  for (DType dt : {kFloat32, kFloat64}) {
    for (const Shape& shape : shapes) {
      for (bool affine : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + ::testing::PrintToString(shape.sizes) + " groups " +
                     std::to_string(shape.groups) + (affine ? " affine" : ""));
        const std::int64_t n = shape.sizes[0], c = shape.sizes[1];
        std::int64_t inner = 1;
        for (std::size_t d = 2; d < shape.sizes.size(); ++d) inner *= shape.sizes[d];
        const Tensor x = non_contiguous_copy(random_tensor(shape.sizes, dt, rng, -3, 5));
        Tensor w, b;
        if (affine) {
          w = random_tensor({c}, dt, rng, 0.5, 2);
          b = random_tensor({c}, dt, rng);
        }
        const Tensor y = F::group_norm(x, shape.groups, w, b, 1e-5);
        EXPECT_EQ(y.sizes(), x.sizes());
        EXPECT_EQ(y.dtype(), dt);
        std::vector<double> conditioning;
        const std::vector<double> want = group_norm_ref(values_of(x), n, c, inner, shape.groups,
                                                        affine ? values_of(w) : std::vector<double>{},
                                                        affine ? values_of(b) : std::vector<double>{}, 1e-5,
                                                        &conditioning);
        // Within the rounding of the dtype at the inputs' scale, carried through the group's std.
        const double unit = dt == kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
        const double rtol = dt == kFloat64 ? 1e-12 : 1e-5;
        const std::vector<double> got = values_of(y);
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double allowed = rtol * std::abs(want[i]) + 8 * unit * (1 + conditioning[i]);
          EXPECT_LE(std::abs(got[i] - want[i]), allowed) << "element " << i << ": got " << got[i] << ", want " << want[i];
        }
      }
    }
  }
}

TEST(GroupNorm, GradientsMatchFiniteDifferences) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor x = random_tensor({2, 4, 3}, kFloat64, rng).set_requires_grad(true);
  const Tensor w = random_tensor({4}, kFloat64, rng, 0.5, 2).set_requires_grad(true);
  const Tensor b = random_tensor({4}, kFloat64, rng).set_requires_grad(true);
  const autograd::GradcheckResult r = autograd::gradcheck(
      [](const std::vector<Tensor>& v) { return F::group_norm(v[0], 2, v[1], v[2]); }, {x, w, b});
  EXPECT_TRUE(r.ok) << r.message;
  const Tensor strided = non_contiguous_copy(random_tensor({3, 6, 2, 2}, kFloat64, rng)).set_requires_grad(true);
  const autograd::GradcheckResult s =
      autograd::gradcheck([](const std::vector<Tensor>& v) { return F::group_norm(v[0], 3); }, {strided});
  EXPECT_TRUE(s.ok) << s.message;
}

TEST(GroupNorm, TheModuleHoldsOnesAndZerosAndIsTheSameInEval) {
  nn::GroupNorm norm(2, 6);
  const auto params = norm->named_parameters();
  ASSERT_EQ(params.size(), 2U);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[1].first, "bias");
  EXPECT_EQ(values_of(norm->weight), std::vector<double>(6, 1.0));
  EXPECT_EQ(values_of(norm->bias), std::vector<double>(6, 0.0));
  EXPECT_TRUE(norm->buffers().empty());
  EXPECT_EQ(norm->str(), "GroupNorm(2, 6, eps=1e-05, affine=true)");
  EXPECT_EQ(nn::GroupNorm(nn::GroupNormOptions(3, 6).eps(1e-3).affine(false))->str(),
            "GroupNorm(3, 6, eps=0.001, affine=false)");
  EXPECT_TRUE(nn::GroupNorm(nn::GroupNormOptions(3, 6).affine(false))->parameters().empty());

  std::mt19937_64 rng(fresh_seed());
  const Tensor x = random_tensor({5, 6, 4}, kFloat32, rng);
  const Tensor training = norm(x);
  EXPECT_TRUE(equal(training, F::group_norm(x, 2, norm->weight, norm->bias)));
  norm->eval();
  EXPECT_TRUE(equal(norm(x), training));
  // One sample alone gets the value it gets in the batch: no statistics across samples.
  EXPECT_TRUE(all_close(values_of(norm(x.narrow(0, 2, 1))), values_of(training.narrow(0, 2, 1)), 0, 0));
  EXPECT_EQ(norm->clone_module()->str(), norm->str());
}

TEST(GroupNorm, BadShapesAndOptionsAreClearErrors) {
  EXPECT_TRUE(throws_with<Error>([] { nn::GroupNorm(4, 6); }, "num_channels (6) must be divisible by num_groups (4)"));
  EXPECT_TRUE(throws_with<Error>([] { nn::GroupNorm(0, 6); }, "must be positive"));
  nn::GroupNorm norm(2, 4);
  EXPECT_TRUE(throws_with<Error>([&] { norm(zeros({2, 6, 3})); }, "expected 4 channels (dim 1), got input of shape [2, 6, 3]"));
  EXPECT_TRUE(throws_with<Error>([&] { norm(zeros({4})); }, "expected 4 channels"));
  EXPECT_TRUE(throws_with<Error>([] { F::group_norm(zeros({2, 6}), 4); }, "divisible by num_groups"));
  EXPECT_TRUE(throws_with<Error>([] { F::group_norm(zeros({2, 6}), 2, ones({3})); }, "expected weight of shape [6]"));
  EXPECT_TRUE(throws_with<Error>([] { F::group_norm(zeros({2, 6}), 2, {}, ones({6}, {.dtype = kFloat64})); },
                                 "expected bias of the input's dtype float32, got float64"));
  EXPECT_TRUE(throws_with<Error>([] { F::group_norm(zeros({2, 6}, {.dtype = kInt64}), 2); },
                                 "expected a floating point input"));
  // An empty batch normalises to an empty result.
  EXPECT_EQ(F::group_norm(zeros({0, 6, 3}), 3).sizes(), IntArrayRef({0, 6, 3}));
}

}  // namespace
}  // namespace hwaro::test
