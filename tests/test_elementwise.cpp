// Unary and binary arithmetic against float64 references on fresh random inputs, over
// contiguous, non-contiguous, broadcast, zero-size and one-element layouts and several dtypes;
// type promotion, in-place forms and every error path.
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "support/test_support.h"

namespace hw = hwaro;
using hw::DType;
using hw::Tensor;

namespace {

// How an input is laid out.
enum class Layout { Contiguous, NonContiguous, Transposed };

Tensor make_input(const std::vector<std::int64_t>& sizes, DType dtype, std::mt19937_64& rng, double lo, double hi,
                  Layout layout) {
  if (layout == Layout::Transposed && sizes.size() == 2) {
    return hw::test::random_tensor({sizes[1], sizes[0]}, dtype, rng, lo, hi).t();
  }
  Tensor t = hw::test::random_tensor(sizes, dtype, rng, lo, hi);
  return layout == Layout::NonContiguous ? hw::test::non_contiguous_copy(t) : t;
}

struct UnaryCase {
  std::vector<std::int64_t> sizes;
  Layout layout;
};
const std::vector<UnaryCase> kUnaryCases = {
    {{3, 5}, Layout::Contiguous},    {{4, 6}, Layout::NonContiguous}, {{5, 3}, Layout::Transposed},
    {{2, 3, 4}, Layout::NonContiguous}, {{0, 3}, Layout::Contiguous}, {{}, Layout::Contiguous},
    {{1, 1}, Layout::Contiguous},    {{70000}, Layout::Contiguous},   {{300, 301}, Layout::Transposed},
};

using UnaryFn = std::function<Tensor(const Tensor&)>;
using UnaryInPlace = std::function<void(Tensor&)>;
using Ref1 = std::function<double(double)>;

// Checks fn (and its in-place form, when the result keeps the dtype) against ref for each dtype.
void check_unary(const char* name, const UnaryFn& fn, const UnaryInPlace& fn_, const Ref1& ref,
                 const std::vector<DType>& dtypes, double lo, double hi, bool float_result) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << name << ", seed " << seed);
  std::mt19937_64 rng(seed);
  for (DType dt : dtypes) {
    const DType out_dt = float_result && !hw::is_floating_point(dt) ? hw::kFloat32 : dt;
    for (const UnaryCase& c : kUnaryCases) {
      SCOPED_TRACE(::testing::Message() << "dtype " << dt << ", shape " << hw::IntArrayRef(c.sizes));
      const Tensor x = make_input(c.sizes, dt, rng, lo, hi, c.layout);
      std::vector<double> expected = hw::test::values_of(x);
      for (double& v : expected) v = ref(v);
      const Tensor y = fn(x);
      EXPECT_EQ(y.dtype(), out_dt);
      EXPECT_EQ(y.sizes(), x.sizes());
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, hw::test::rtol_for(out_dt),
                                      hw::test::atol_for(out_dt)));
      if (out_dt == dt && fn_) {
        Tensor z = x.clone();
        if (c.layout != Layout::Contiguous) z = hw::test::non_contiguous_copy(z);
        const auto version = z.version();
        fn_(z);
        EXPECT_GT(z.version(), version);
        EXPECT_TRUE(hw::test::all_close(hw::test::values_of(z), expected, hw::test::rtol_for(out_dt),
                                        hw::test::atol_for(out_dt)));
      }
    }
  }
}

const std::vector<DType> kFloatTypes = {hw::kFloat32, hw::kFloat64, hw::kFloat16, hw::kBFloat16};
const std::vector<DType> kAllNumeric = {hw::kFloat32, hw::kFloat64, hw::kFloat16, hw::kBFloat16, hw::kInt32,
                                        hw::kInt64};

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST(Unary, NegAbsRelu) {
  check_unary("neg", [](const Tensor& x) { return hw::neg(x); }, [](Tensor& x) { x.neg_(); },
              [](double v) { return -v; }, kAllNumeric, -5, 5, false);
  check_unary("operator-", [](const Tensor& x) { return -x; }, nullptr, [](double v) { return -v; }, kAllNumeric,
              -5, 5, false);
  check_unary("abs", [](const Tensor& x) { return x.abs(); }, [](Tensor& x) { x.abs_(); },
              [](double v) { return std::abs(v); }, kAllNumeric, -5, 5, false);
  check_unary("relu", [](const Tensor& x) { return hw::relu(x); }, [](Tensor& x) { x.relu_(); },
              [](double v) { return v < 0 ? 0.0 : v; }, kAllNumeric, -5, 5, false);
}

TEST(Unary, Transcendental) {
  std::vector<DType> with_ints = kFloatTypes;
  with_ints.push_back(hw::kInt32);
  with_ints.push_back(hw::kInt64);
  check_unary("exp", [](const Tensor& x) { return hw::exp(x); }, [](Tensor& x) { x.exp_(); },
              [](double v) { return std::exp(v); }, with_ints, -3, 3, true);
  check_unary("log", [](const Tensor& x) { return x.log(); }, [](Tensor& x) { x.log_(); },
              [](double v) { return std::log(v); }, with_ints, 0.1, 5, true);
  check_unary("expm1", [](const Tensor& x) { return hw::expm1(x); }, [](Tensor& x) { x.expm1_(); },
              [](double v) { return std::expm1(v); }, with_ints, -3, 3, true);
  check_unary("log1p", [](const Tensor& x) { return x.log1p(); }, [](Tensor& x) { x.log1p_(); },
              [](double v) { return std::log1p(v); }, with_ints, -0.9, 5, true);
  check_unary("sqrt", [](const Tensor& x) { return hw::sqrt(x); }, [](Tensor& x) { x.sqrt_(); },
              [](double v) { return std::sqrt(v); }, with_ints, 0, 5, true);
  check_unary("rsqrt", [](const Tensor& x) { return hw::rsqrt(x); }, [](Tensor& x) { x.rsqrt_(); },
              [](double v) { return 1.0 / std::sqrt(v); }, with_ints, 0.1, 5, true);
  check_unary("tanh", [](const Tensor& x) { return hw::tanh(x); }, [](Tensor& x) { x.tanh_(); },
              [](double v) { return std::tanh(v); }, with_ints, -4, 4, true);
}

TEST(Unary, Activations) {
  check_unary("sigmoid", [](const Tensor& x) { return hw::sigmoid(x); }, [](Tensor& x) { x.sigmoid_(); },
              sigmoid_ref, kFloatTypes, -8, 8, true);
  check_unary("silu", [](const Tensor& x) { return x.silu(); }, [](Tensor& x) { x.silu_(); },
              [](double v) { return v * sigmoid_ref(v); }, kFloatTypes, -6, 6, true);
  check_unary("gelu", [](const Tensor& x) { return hw::gelu(x); }, [](Tensor& x) { x.gelu_(); },
              [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }, kFloatTypes, -5, 5, true);
  const double k = std::sqrt(2.0 / M_PI);
  check_unary("gelu tanh", [](const Tensor& x) { return x.gelu(/*tanh_approximation=*/true); },
              [](Tensor& x) { x.gelu_(true); },
              [k](double v) { return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))); }, kFloatTypes, -5,
              5, true);
  check_unary("sigmoid of ints", [](const Tensor& x) { return x.sigmoid(); }, nullptr, sigmoid_ref,
              {hw::kInt32, hw::kInt64}, -8, 8, true);
}

TEST(Unary, SigmoidIsStableAtTheTails) {
  const Tensor x = hw::tensor({-1000.f, -100.f, 0.f, 100.f, 1000.f});
  const std::vector<double> y = hw::test::values_of(hw::sigmoid(x));
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], std::exp(-100.0), 1e-45);
  EXPECT_EQ(y[2], 0.5);
  EXPECT_EQ(y[3], 1.0);
  EXPECT_EQ(y[4], 1.0);
  const std::vector<double> s = hw::test::values_of(hw::silu(x));
  EXPECT_EQ(s[0], 0.0);  // -1000 * 0, not -1000 * nan
  EXPECT_EQ(s[4], 1000.0);
}

// Near 0, where exp(x) - 1 and log(1 + x) keep only rounding error in float32, expm1 and log1p
// keep float32's relative precision, as torch.expm1 and torch.log1p.
TEST(Unary, Expm1AndLog1pAreExactNearZero) {
  const std::vector<double> xs = {1e-10, -3e-9, 2.5e-7, -1e-5, 1e-3};
  std::vector<float> fs;
  for (double v : xs) fs.push_back(static_cast<float>(v));
  const Tensor x = hw::tensor(fs);
  const std::vector<double> e = hw::test::values_of(hw::expm1(x));
  const std::vector<double> l = hw::test::values_of(hw::log1p(x));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double v = static_cast<double>(fs[i]);
    EXPECT_NEAR(e[i], std::expm1(v), 1e-6 * std::abs(v)) << v;
    EXPECT_NEAR(l[i], std::log1p(v), 1e-6 * std::abs(v)) << v;
  }
  // The plain forms lose the smallest value entirely in float32: what the new ops are for.
  EXPECT_EQ(hw::test::values_of(hw::exp(x) - 1)[0], 0.0);
  EXPECT_EQ(hw::test::values_of(hw::log(x + 1))[0], 0.0);
  EXPECT_EQ(hw::test::values_of(hw::log1p(hw::tensor({-1.f})))[0], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(hw::test::values_of(hw::log1p(hw::tensor({-2.f})))[0]));
}

TEST(Unary, NanPropagates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = hw::tensor({nan, 1.f});
  for (const Tensor& y : {hw::relu(x), hw::sigmoid(x), hw::clamp(x, 0, 0.5), hw::abs(x), hw::gelu(x)}) {
    EXPECT_TRUE(std::isnan(hw::test::values_of(y)[0]));
  }
}

TEST(Unary, Clamp) {
  for (double lo : {-1.0, 0.5}) {
    check_unary("clamp both", [lo](const Tensor& x) { return hw::clamp(x, lo, 1.25); },
                [lo](Tensor& x) { x.clamp_(lo, 1.25); }, [lo](double v) { return std::min(std::max(v, lo), 1.25); },
                kFloatTypes, -3, 3, false);
  }
  check_unary("clamp min", [](const Tensor& x) { return x.clamp(0.25); }, [](Tensor& x) { x.clamp_(0.25); },
              [](double v) { return std::max(v, 0.25); }, kFloatTypes, -3, 3, false);
  check_unary("clamp max", [](const Tensor& x) { return x.clamp(std::nullopt, -0.5); },
              [](Tensor& x) { x.clamp_(std::nullopt, -0.5); }, [](double v) { return std::min(v, -0.5); },
              kFloatTypes, -3, 3, false);
  check_unary("clamp ints", [](const Tensor& x) { return x.clamp(-2, 3); }, [](Tensor& x) { x.clamp_(-2, 3); },
              [](double v) { return std::min(std::max(v, -2.0), 3.0); }, {hw::kInt32, hw::kInt64}, -6, 6, false);
  // min > max: everything is max, as torch.clamp.
  EXPECT_EQ(hw::tensor({-5.f, 0.f, 5.f}).clamp(2, 1).to_vector<float>(), (std::vector<float>{1, 1, 1}));
  // An integer tensor clamped by a float bound becomes float32.
  const Tensor c = hw::tensor({-3, 0, 3}).clamp(-1.5, 1.5);
  EXPECT_EQ(c.dtype(), hw::kFloat32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{-1.5f, 0.f, 1.5f}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::tensor({1.f}).clamp(std::nullopt); },
                                               "at least one of 'min' or 'max'"));
}

TEST(Unary, PowScalar) {
  for (double e : {2.0, 3.0, 0.5, -1.5, 0.0}) {
    check_unary("pow scalar", [e](const Tensor& x) { return hw::pow(x, e); }, [e](Tensor& x) { x.pow_(e); },
                [e](double v) { return std::pow(v, e); }, kFloatTypes, 0.25, 3, false);
  }
  for (int e : {0, 1, 2, 3}) {
    check_unary("pow int", [e](const Tensor& x) { return x.pow(e); }, [e](Tensor& x) { x.pow_(e); },
                [e](double v) { return std::pow(v, e); }, {hw::kInt32, hw::kInt64}, -5, 5, false);
  }
  EXPECT_EQ(hw::tensor({2, 3}).pow(0.5).dtype(), hw::kFloat32);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::tensor({2, 3}).pow(-1); },
                                               "integers to negative integer powers are not allowed"));
}

TEST(Unary, IntegerInputsToFloatFunctionsGiveFloat32) {
  const Tensor x = hw::tensor({1, 4, 9});
  EXPECT_EQ(hw::sqrt(x).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::sqrt(x).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(hw::exp(hw::tensor({true, false})).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::relu(x).dtype(), hw::kInt32);  // a C++ int list is int32
  EXPECT_EQ(hw::abs(hw::tensor({std::int64_t{-2}})).dtype(), hw::kInt64);
}

TEST(Unary, Errors) {
  Tensor ints = hw::tensor({1, 2, 3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ints.exp_(); },
                                               "result type float32 can't be cast to the desired output type int32"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ints.sigmoid_(); }, "sigmoid_"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ints.clamp_(0.5); }, "can't be cast"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { -hw::tensor({true}); }, "use the `!` operator or logical_not()"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::exp(Tensor()); }, "exp: argument 'self' is an undefined"));
}

// ---- binary ----
namespace {

struct BinaryCase {
  std::vector<std::int64_t> a, b, out;
  Layout la, lb;
};
const std::vector<BinaryCase> kBinaryCases = {
    {{3, 5}, {3, 5}, {3, 5}, Layout::Contiguous, Layout::Contiguous},
    {{4, 6}, {4, 6}, {4, 6}, Layout::NonContiguous, Layout::Transposed},
    {{5, 3}, {5, 3}, {5, 3}, Layout::Transposed, Layout::Contiguous},
    {{3, 1, 4}, {2, 4}, {3, 2, 4}, Layout::Contiguous, Layout::Contiguous},
    {{3, 1, 4}, {2, 4}, {3, 2, 4}, Layout::NonContiguous, Layout::NonContiguous},
    {{2, 4}, {}, {2, 4}, Layout::Contiguous, Layout::Contiguous},
    {{}, {2, 3}, {2, 3}, Layout::Contiguous, Layout::Transposed},
    {{0, 3}, {3}, {0, 3}, Layout::Contiguous, Layout::Contiguous},
    {{}, {}, {}, Layout::Contiguous, Layout::Contiguous},
    {{1}, {1}, {1}, Layout::Contiguous, Layout::Contiguous},
    {{70000}, {70000}, {70000}, Layout::Contiguous, Layout::Contiguous},
    {{200, 1}, {1, 400}, {200, 400}, Layout::Contiguous, Layout::Contiguous},
};

using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;
using BinaryInPlace = std::function<void(Tensor&, const Tensor&)>;
using Ref2 = std::function<double(double, double)>;

struct Range {
  double lo, hi;
};

// Checks fn (and fn_, on cases whose broadcast shape is a's) against ref for each dtype pair (same dtype).
void check_binary(const char* name, const BinaryFn& fn, const BinaryInPlace& fn_, const Ref2& ref,
                  const std::vector<DType>& dtypes, Range ra, Range rb, bool float_result) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << name << ", seed " << seed);
  std::mt19937_64 rng(seed);
  for (DType dt : dtypes) {
    const DType out_dt = float_result && !hw::is_floating_point(dt) ? hw::kFloat32 : dt;
    for (const BinaryCase& c : kBinaryCases) {
      SCOPED_TRACE(::testing::Message() << "dtype " << dt << ", shapes " << hw::IntArrayRef(c.a) << " and "
                                        << hw::IntArrayRef(c.b));
      const Tensor a = make_input(c.a, dt, rng, ra.lo, ra.hi, c.la);
      const Tensor b = make_input(c.b, dt, rng, rb.lo, rb.hi, c.lb);
      const std::vector<double> va = hw::test::values_of(a.expand(c.out));
      const std::vector<double> vb = hw::test::values_of(b.expand(c.out));
      std::vector<double> expected(va.size());
      for (std::size_t i = 0; i < va.size(); ++i) expected[i] = ref(va[i], vb[i]);
      const Tensor y = fn(a, b);
      EXPECT_EQ(y.dtype(), out_dt);
      EXPECT_EQ(y.sizes(), hw::IntArrayRef(c.out));
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, hw::test::rtol_for(out_dt),
                                      hw::test::atol_for(out_dt)));
      if (fn_ && out_dt == dt && c.out == c.a) {
        Tensor z = a.clone();
        const auto version = z.version();
        fn_(z, b);
        EXPECT_GT(z.version(), version);
        EXPECT_TRUE(hw::test::all_close(hw::test::values_of(z), expected, hw::test::rtol_for(out_dt),
                                        hw::test::atol_for(out_dt)));
      }
    }
  }
}

}  // namespace

TEST(Binary, AddSubMul) {
  check_binary("add", [](const Tensor& a, const Tensor& b) { return a + b; },
               [](Tensor& a, const Tensor& b) { a += b; }, [](double x, double y) { return x + y; }, kAllNumeric,
               {-5, 5}, {-5, 5}, false);
  check_binary("add alpha", [](const Tensor& a, const Tensor& b) { return hw::add(a, b, 3); },
               [](Tensor& a, const Tensor& b) { a.add_(b, 3); }, [](double x, double y) { return x + 3 * y; },
               kAllNumeric, {-5, 5}, {-5, 5}, false);
  check_binary("add float alpha", [](const Tensor& a, const Tensor& b) { return a.add(b, 0.5); },
               [](Tensor& a, const Tensor& b) { a.add_(b, 0.5); }, [](double x, double y) { return x + 0.5 * y; },
               kFloatTypes, {-5, 5}, {-5, 5}, false);
  check_binary("sub", [](const Tensor& a, const Tensor& b) { return a - b; },
               [](Tensor& a, const Tensor& b) { a -= b; }, [](double x, double y) { return x - y; }, kAllNumeric,
               {-5, 5}, {-5, 5}, false);
  check_binary("sub alpha", [](const Tensor& a, const Tensor& b) { return hw::sub(a, b, 2); },
               [](Tensor& a, const Tensor& b) { a.sub_(b, 2); }, [](double x, double y) { return x - 2 * y; },
               kAllNumeric, {-5, 5}, {-5, 5}, false);
  check_binary("mul", [](const Tensor& a, const Tensor& b) { return a * b; },
               [](Tensor& a, const Tensor& b) { a *= b; }, [](double x, double y) { return x * y; }, kAllNumeric,
               {-5, 5}, {-5, 5}, false);
}

// Integer add, sub and mul wrap on overflow, as PyTorch's (two's complement); in C++ a signed
// overflow is undefined, which the UBSan build of CI would report.
TEST(Binary, SignedIntegerArithmeticWraps) {
  constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max(), min64 = std::numeric_limits<std::int64_t>::min();
  const Tensor big = hw::tensor(std::vector<std::int64_t>{max64, min64});
  EXPECT_EQ((big + hw::tensor(std::vector<std::int64_t>{1, 0})).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{min64, min64}));
  EXPECT_EQ((big - hw::tensor(std::vector<std::int64_t>{0, 1})).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{max64, max64}));
  EXPECT_EQ(hw::add(big, big, 3).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-4, 0}));
  const Tensor i32 = hw::tensor(std::vector<std::int32_t>{1 << 30, -(1 << 30), 3});
  EXPECT_EQ((i32 * hw::tensor(std::vector<std::int32_t>{4, 4, 5})).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0, 0, 15}));
}

TEST(Binary, DivIsTrueDivision) {
  check_binary("div", [](const Tensor& a, const Tensor& b) { return a / b; },
               [](Tensor& a, const Tensor& b) { a /= b; }, [](double x, double y) { return x / y; }, kAllNumeric,
               {-5, 5}, {0.5, 4}, true);
  // Integer zero divisors give inf and nan, as torch.div, not a crash.
  const std::vector<float> q = (hw::tensor({1, -1, 0}) / hw::tensor({0, 0, 0})).to_vector<float>();
  EXPECT_EQ(q[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(q[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(q[2]));
  EXPECT_EQ((hw::tensor({7, 8}) / 2).to_vector<float>(), (std::vector<float>{3.5f, 4.f}));
  Tensor ints = hw::tensor({1, 2});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ints /= 2; }, "can't be cast to the desired output type int32"));
}

TEST(Binary, Pow) {
  check_binary("pow", [](const Tensor& a, const Tensor& b) { return hw::pow(a, b); },
               [](Tensor& a, const Tensor& b) { a.pow_(b); }, [](double x, double y) { return std::pow(x, y); },
               kFloatTypes, {0.25, 3}, {-2, 2}, false);
  check_binary("pow ints", [](const Tensor& a, const Tensor& b) { return a.pow(b); },
               [](Tensor& a, const Tensor& b) { a.pow_(b); }, [](double x, double y) { return std::pow(x, y); },
               {hw::kInt32, hw::kInt64}, {-4, 4}, {0, 4}, false);
  // Negative integer exponents in a tensor: PyTorch's rule (1 and -1 keep magnitude, others 0).
  EXPECT_EQ(hw::pow(hw::tensor({1, -1, -1, 2}), hw::tensor({-2, -3, -2, -1})).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, -1, 1, 0}));
  // pow(Scalar, Tensor)
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const Tensor e = hw::test::non_contiguous_copy(hw::test::random_tensor({3, 4}, hw::kFloat32, rng, -2, 2));
  const Tensor p = hw::pow(2.5, e);
  std::vector<double> expected = hw::test::values_of(e);
  for (double& v : expected) v = std::pow(2.5, v);
  EXPECT_EQ(p.dtype(), hw::kFloat32);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(p), expected, 1e-5, 1e-6));
  EXPECT_EQ(hw::pow(2, hw::tensor({0, 1, 3})).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2, 8}));
  EXPECT_EQ(hw::pow(0.5, hw::tensor({1, 2})).dtype(), hw::kFloat32);
}

TEST(Binary, MaximumMinimum) {
  std::vector<DType> types = kAllNumeric;
  check_binary("maximum", [](const Tensor& a, const Tensor& b) { return hw::maximum(a, b); }, nullptr,
               [](double x, double y) { return std::max(x, y); }, types, {-5, 5}, {-5, 5}, false);
  check_binary("minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, nullptr,
               [](double x, double y) { return std::min(x, y); }, types, {-5, 5}, {-5, 5}, false);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> m = hw::test::values_of(hw::maximum(hw::tensor({nan, 1.f}), hw::tensor({1.f, nan})));
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
}

TEST(Binary, ScalarOperands) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (DType dt : kFloatTypes) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor x = hw::test::non_contiguous_copy(hw::test::random_tensor({4, 5}, dt, rng, 0.5, 3));
    const std::vector<double> v = hw::test::values_of(x);
    const double rtol = hw::test::rtol_for(dt), atol = hw::test::atol_for(dt);
    auto expect = [&](const Tensor& y, const std::function<double(double)>& f) {
      std::vector<double> e = v;
      for (double& d : e) d = f(d);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), e, rtol, atol));
    };
    expect(x + 2, [](double d) { return d + 2; });
    expect(2 + x, [](double d) { return 2 + d; });
    expect(x - 2.5, [](double d) { return d - 2.5; });
    expect(3 - x, [](double d) { return 3 - d; });
    expect(x * 1.5, [](double d) { return d * 1.5; });
    expect(2 * x, [](double d) { return 2 * d; });
    expect(x / 4, [](double d) { return d / 4; });
    expect(1 / x, [](double d) { return 1 / d; });
    Tensor z = x.clone();
    z += 1;
    z *= 2;
    z -= 0.5;
    z /= 4;
    expect(z, [](double d) { return ((d + 1) * 2 - 0.5) / 4; });
  }
  EXPECT_EQ((hw::tensor({std::int64_t{1} << 60}) + 1).to_vector<std::int64_t>()[0], (std::int64_t{1} << 60) + 1);
}

TEST(Binary, TypePromotion) {
  const Tensor i32 = hw::tensor({1, 2}, {.dtype = hw::kInt32});
  const Tensor i64 = hw::tensor({1, 2}, {.dtype = hw::kInt64});
  const Tensor f32 = hw::tensor({1.f, 2.f});
  const Tensor f64_0d = hw::scalar_tensor(0.5, {.dtype = hw::kFloat64});
  EXPECT_EQ((i32 + f32).dtype(), hw::kFloat32);
  EXPECT_EQ((i32 + f32).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ((i64 + 2.5).dtype(), hw::kFloat32);
  EXPECT_EQ((i64 + 2.5).to_vector<float>(), (std::vector<float>{3.5f, 4.5f}));
  EXPECT_EQ((f32 + 2).dtype(), hw::kFloat32);
  EXPECT_EQ((i32 + 2).dtype(), hw::kInt32);
  EXPECT_EQ((i32 + i64).dtype(), hw::kInt64);
  EXPECT_EQ((f32 * f64_0d).dtype(), hw::kFloat32);   // a 0-dim tensor of the same kind does not promote
  EXPECT_EQ((i32 * f64_0d).dtype(), hw::kFloat64);   // of a higher kind it does
  EXPECT_EQ((f64_0d * f64_0d).dtype(), hw::kFloat64);
  EXPECT_EQ((hw::tensor({1.f}, {.dtype = hw::kFloat16}) + hw::tensor({1.f}, {.dtype = hw::kBFloat16})).dtype(),
            hw::kFloat32);
  EXPECT_EQ((i32 / i32).dtype(), hw::kFloat32);
  // bool arithmetic, as PyTorch: add is "or", mul is "and"; a bool with an int scalar is int64.
  const Tensor t = hw::tensor({true, true, false, false}), u = hw::tensor({true, false, true, false});
  EXPECT_EQ((t + u).dtype(), hw::kBool);
  EXPECT_EQ((t + u).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ((t * u).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ((t + 1).dtype(), hw::kInt64);
  EXPECT_EQ((t + 1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 2, 1, 1}));
  EXPECT_EQ((t / u).dtype(), hw::kFloat32);
  // In place keeps self's dtype: int32 += int64 is computed in int64 and stored as int32.
  Tensor a = i32.clone();
  a += i64;
  EXPECT_EQ(a.dtype(), hw::kInt32);
  EXPECT_EQ(a.to_vector<std::int32_t>(), (std::vector<std::int32_t>{2, 4}));
  Tensor h = hw::tensor({1.f, 2.f}, {.dtype = hw::kFloat16});
  h += f32;
  EXPECT_EQ(h.dtype(), hw::kFloat16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST(Binary, InPlaceAliasing) {
  Tensor x = hw::arange(6, {.dtype = hw::kFloat32}).reshape({2, 3});
  x.add_(x);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  Tensor sq = hw::arange(4, {.dtype = hw::kFloat32}).reshape({2, 2});
  sq.add_(sq.t());  // reads the transpose of what it writes: must see the values before the op
  EXPECT_EQ(sq.to_vector<float>(), (std::vector<float>{0, 3, 3, 6}));
}

// Writing into an expanded tensor (stride 0) would land every element's result on one memory
// location, so add_ gave each element the sum of all the writes; it is refused, as PyTorch does,
// before anything is written. fill_ and masked_fill_ write one value and stay allowed.
TEST(InPlace, AnExpandedTargetIsRefusedAndLeftUnchanged) {
  const Tensor base = hw::tensor({1.f, 2.f, 3.f});
  const std::vector<std::pair<const char*, std::function<void(Tensor&)>>> writes = {
      {"add_", [](Tensor& t) { t.add_(hw::ones({4, 3})); }},
      {"mul_", [](Tensor& t) { t.mul_(2.0); }},
      {"exp_", [](Tensor& t) { t.exp_(); }},
      {"relu_", [](Tensor& t) { t.relu_(); }},
      {"copy_", [](Tensor& t) { t.copy_(hw::arange(12, {.dtype = hw::kFloat32}).reshape({4, 3})); }},
      {"scatter_add_",
       [](Tensor& t) { t.scatter_add_(0, hw::zeros({1, 3}, {.dtype = hw::kInt64}), hw::ones({1, 3})); }},
  };
  for (const auto& [name, write] : writes) {
    SCOPED_TRACE(name);
    Tensor storage = base.clone();
    Tensor expanded = storage.expand({4, 3});
    EXPECT_TRUE(hw::test::throws_with<hw::Error>(
        [&] { write(expanded); },
        std::string(name) + ": more than one element of the written-to tensor refers to a single memory location"));
    EXPECT_EQ(storage.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  }
  // A size-1 dimension's stride is never stepped, so stride 0 there is no overlap.
  Tensor one_row = base.clone().expand({1, 3});
  one_row.add_(1.0);
  EXPECT_EQ(one_row.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  Tensor filled = base.clone();
  filled.expand({4, 3}).fill_(7.0);
  EXPECT_EQ(filled.to_vector<float>(), (std::vector<float>{7, 7, 7}));
}

TEST(Binary, Errors) {
  const Tensor a = hw::zeros({3}), b = hw::zeros({4});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { a + b; }, "add: shapes [3] and [4] cannot be broadcast"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::maximum(a, b); }, "maximum: shapes"));
  Tensor small = hw::zeros({3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { small.add_(hw::zeros({2, 3})); },
                                               "add_: output with shape [3] doesn't match the broadcast shape [2, 3]"));
  Tensor ints = hw::tensor({1, 2, 3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { ints.add_(hw::tensor({0.5f, 1.f, 2.f})); },
      "add_: result type float32 can't be cast to the desired output type int32"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ints += 2.5; }, "can't be cast to the desired output type"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ints.mul_(0.5); }, "mul_"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::add(ints, ints, 0.5); },
                                               "alpha must not be a floating point number"));
  const Tensor t = hw::tensor({true});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { t - t; }, "with two bool tensors is not supported"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { t - 1; }, "with a bool tensor is not supported"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { Tensor() + a; }, "add: argument 'self' is an undefined"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { Tensor() + 1; }, "add: argument 'self' is an undefined"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { Tensor() < 1; }, "lt: argument 'self' is an undefined"));
}

TEST(Binary, DeviceMismatch) {
  const Tensor cpu = hw::ones({3});
  Tensor cpu_mut = hw::ones({3});
  const Tensor other = hw::ones({3}, {.device = hw::test::other_device()});
  const auto msg = [](const char* arg, const char* op) {
    return std::string("Expected all tensors to be on the same device, but found at least two devices, cpu and "
                       "test:0! (when checking argument '") + arg + "' of " + op + ")";
  };
  using E = hw::DeviceMismatchError;
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu + other; }, msg("other", "add")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::add(cpu, other, 2); }, msg("other", "add")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu - other; }, msg("other", "sub")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu * other; }, msg("other", "mul")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu / other; }, msg("other", "div")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::pow(cpu, other); }, msg("exponent", "pow")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::maximum(cpu, other); }, msg("other", "maximum")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::minimum(cpu, other); }, msg("other", "minimum")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu_mut += other; }, msg("other", "add_")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu_mut -= other; }, msg("other", "sub_")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu_mut *= other; }, msg("other", "mul_")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu_mut /= other; }, msg("other", "div_")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu_mut.pow_(other); }, msg("exponent", "pow_")));
  EXPECT_EQ(cpu_mut.to_vector<float>(), (std::vector<float>{1, 1, 1}));  // nothing ran
  // On one non-CPU device the ops run there.
  const Tensor sum = other + other;
  EXPECT_EQ(sum.device(), hw::test::other_device());
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{2, 2, 2}));
}
