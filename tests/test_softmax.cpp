// softmax and log_softmax against float64 references on fresh random inputs: every dim
// (negative too), contiguous and non-contiguous inputs, rows long enough to be split over
// threads, zero-size and one-element inputs, the 16-bit floats; stability for large values,
// NaN and -inf entries; error messages.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace hw = hwaro;
using hw::DType;
using hw::Tensor;
using Dims = std::vector<std::int64_t>;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The reference over dim `dim` of values laid out row-major with `sizes`.
std::vector<double> ref_softmax(const std::vector<double>& v, const Dims& sizes, std::int64_t dim, bool log) {
  const std::int64_t ndim = static_cast<std::int64_t>(sizes.size());
  if (ndim == 0) return {log ? 0.0 : 1.0};
  const std::int64_t d = dim < 0 ? dim + ndim : dim;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < d; ++i) outer *= sizes[i];
  for (std::int64_t i = d + 1; i < ndim; ++i) inner *= sizes[i];
  const std::int64_t r = sizes[d];
  std::vector<double> out(v.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t j = 0; j < inner; ++j) {
      auto at = [&](std::int64_t k) { return static_cast<std::size_t>((o * r + k) * inner + j); };
      double m = -kInf;
      for (std::int64_t k = 0; k < r; ++k) m = std::max(m, v[at(k)]);
      double s = 0;
      for (std::int64_t k = 0; k < r; ++k) s += std::exp(v[at(k)] - m);
      for (std::int64_t k = 0; k < r; ++k) out[at(k)] = log ? v[at(k)] - m - std::log(s) : std::exp(v[at(k)] - m) / s;
    }
  }
  return out;
}

struct Case {
  Dims sizes;
  bool non_contiguous;
};

void check(DType dt, const Case& c, std::mt19937_64& rng, double lo, double hi) {
  Tensor x = hw::test::random_tensor(c.sizes, dt, rng, lo, hi);
  if (c.non_contiguous) x = hw::test::non_contiguous_copy(x);
  const std::vector<double> v = hw::test::values_of(x);
  const std::int64_t ndim = std::max<std::int64_t>(x.dim(), 1);
  for (std::int64_t dim = -ndim; dim < ndim; ++dim) {
    SCOPED_TRACE(::testing::Message() << "dtype " << dt << ", shape " << hw::IntArrayRef(c.sizes) << ", dim " << dim);
    for (bool log : {false, true}) {
      const Tensor y = log ? hw::log_softmax(x, dim) : x.softmax(dim);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(y.sizes(), x.sizes());
      // log_softmax's values grow with the spread of the inputs; its error is relative to that.
      const double atol = hw::test::atol_for(dt) * (log ? 1 + hi - lo : 1);
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), ref_softmax(v, c.sizes, dim, log),
                                      hw::test::rtol_for(dt), atol));
    }
  }
}

}  // namespace

TEST(Softmax, MatchesReferenceOverEveryDim) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<Case> cases = {{{3, 5}, false}, {{4, 6}, true},  {{2, 3, 70}, false}, {{3, 4, 5}, true},
                                   {{0, 3}, false}, {{}, false},     {{1}, false},        {{1, 1}, true},
                                   {{2, 1, 3}, false}, {{5, 100}, true}};
  for (DType dt : {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kFloat16}) {
    for (const Case& c : cases) check(dt, c, rng, -4, 4);
  }
}

TEST(Softmax, LongRowsSplitOverThreads) {
  // The benchmark's shape, scaled down: many long last-dim rows, and a non-last dim with many columns.
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (DType dt : {hw::kFloat32, hw::kBFloat16}) {
    for (const Case& c : {Case{{256, 1000}, false}, Case{{3, 20000}, false}, Case{{300, 200}, true}}) {
      check(dt, c, rng, -10, 10);
    }
  }
}

TEST(Softmax, RowsSumToOneAndStayStableForLargeValues) {
  const Tensor x = hw::tensor({{1000.f, 1001.f, 999.f}, {-1000.f, -1001.f, -999.f}});
  const Tensor y = x.softmax(1);
  const std::vector<double> expected = ref_softmax({1000, 1001, 999, -1000, -1001, -999}, {2, 3}, 1, false);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, 1e-6, 1e-7));
  const std::vector<double> expected_log = ref_softmax({1000, 1001, 999, -1000, -1001, -999}, {2, 3}, 1, true);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(x.log_softmax(-1)), expected_log, 1e-6, 1e-5));
  std::mt19937_64 rng(hw::test::fresh_seed());
  const Tensor r = hw::test::random_tensor({64, 513}, hw::kFloat32, rng, -50, 50);
  for (double s : hw::test::values_of(r.softmax(1).sum({1}))) EXPECT_NEAR(s, 1.0, 1e-5);
}

TEST(Softmax, InfinitiesAndNaN) {
  // -inf entries (masked attention) give 0, and -inf in log_softmax; a row that is all -inf,
  // or has a NaN, is NaN throughout, as PyTorch.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : {hw::kFloat32, hw::kFloat64}) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor x = hw::tensor(std::vector<double>{0, -kInf, 0, -kInf, -kInf, -kInf, 1, nan, 2}, {3, 3}).to(dt);
    const std::vector<double> y = hw::test::values_of(x.softmax(1));
    EXPECT_EQ(y[0], 0.5);
    EXPECT_EQ(y[1], 0.0);
    EXPECT_EQ(y[2], 0.5);
    for (int i = 3; i < 9; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
    const std::vector<double> ly = hw::test::values_of(x.log_softmax(1));
    EXPECT_NEAR(ly[0], -std::log(2.0), 1e-6);
    EXPECT_EQ(ly[1], -kInf);
    for (int i = 3; i < 9; ++i) EXPECT_TRUE(std::isnan(ly[i])) << i;
    // The same along a non-last dim.
    const std::vector<double> yt = hw::test::values_of(x.t().contiguous().softmax(0));
    EXPECT_EQ(yt[0], 0.5);
    EXPECT_EQ(yt[3], 0.0);
    EXPECT_TRUE(std::isnan(yt[1]));
    EXPECT_TRUE(std::isnan(yt[2]));
  }
}

TEST(Softmax, Errors) {
  using hw::test::throws_with;
  const Tensor x = hw::ones({2, 3});
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.softmax(2); },
                                          "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.log_softmax(-3); }, "but got -3"));
  const Tensor ints = hw::ones({3}, {.dtype = hw::kInt64});
  EXPECT_TRUE(throws_with<hw::Error>([&] { ints.softmax(0); },
                                     "softmax(): expected a floating point tensor, got int64; convert it with"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::log_softmax(ints, 0); }, "log_softmax(): expected a floating point"));
  const Tensor undefined;
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::softmax(undefined, 0); },
                                     "softmax: argument 'self' is an undefined tensor"));
}
