// Reductions against float64 references on fresh random inputs: every subset of dims (negative
// dims included), keepdim on and off, contiguous and non-contiguous inputs, zero-size and
// one-element inputs, several dtypes; long float32 sums, thread independence; every error path.
#include <algorithm>
#include <cmath>
#include <limits>

#include "support/reduction_reference.h"
#include "support/test_support.h"

namespace hw = hwaro;
using hw::DType;
using hw::Tensor;
using Dims = std::vector<std::int64_t>;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  Dims sizes;
  bool non_contiguous;
};
const std::vector<Case> kCases = {
    {{3, 5}, false},  {{4, 6}, true}, {{2, 3, 4}, false}, {{3, 4, 5}, true}, {{0, 3}, false},
    {{}, false},      {{1}, false},   {{1, 1}, true},     {{2, 1, 3}, false},
};

Tensor make_input(const Case& c, DType dt, std::mt19937_64& rng, double lo = -2, double hi = 2) {
  Tensor x = hw::test::random_tensor(c.sizes, dt, rng, lo, hi);
  return c.non_contiguous ? hw::test::non_contiguous_copy(x) : x;
}

using Reduce = std::function<Tensor(const Tensor&, const Dims&, bool)>;
using RefFn = std::function<double(const std::vector<double>&)>;

// A result of out_dt reducing groups of up to n values of magnitude up to `scale`: rounding of
// the result plus an accumulation error growing like sqrt(n).
::testing::AssertionResult close_to(const Tensor& y, const std::vector<double>& expected, DType out_dt,
                                    std::size_t n, double scale) {
  const double growth = std::sqrt(static_cast<double>(std::max<std::size_t>(n, 1))) * scale;
  return hw::test::all_close(hw::test::values_of(y), expected, hw::test::rtol_for(out_dt),
                             hw::test::atol_for(out_dt) + hw::test::rtol_for(out_dt) * growth);
}

std::int64_t dims_of(const Tensor& x) { return std::max<std::int64_t>(x.dim(), 1); }

// Runs fn over every case, dtype, dims subset and keepdim, against ref applied to each group.
void check_reduction(const char* name, const Reduce& fn, const RefFn& ref, const std::vector<DType>& dtypes,
                     const std::function<DType(DType)>& out_dtype, double lo = -2, double hi = 2,
                     bool skip_empty_groups = false) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << name << ", seed " << seed);
  std::mt19937_64 rng(seed);
  for (DType dt : dtypes) {
    for (const Case& c : kCases) {
      const Tensor x = make_input(c, dt, rng, lo, hi);
      for (const Dims& dims : hw::test::dim_subsets(x.dim())) {
        const hw::test::Groups g = hw::test::group_values(x, dims);
        const bool empty_groups = !g.values.empty() && g.values[0].empty();
        if (skip_empty_groups && (empty_groups || x.numel() == 0)) continue;
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(::testing::Message() << "dtype " << dt << ", shape " << hw::IntArrayRef(c.sizes) << ", dims "
                                            << hw::IntArrayRef(dims) << ", keepdim " << keepdim);
          const Tensor y = fn(x, dims, keepdim);
          EXPECT_EQ(y.dtype(), out_dtype(dt));
          EXPECT_EQ(y.sizes(), hw::IntArrayRef(keepdim ? g.kept_sizes : g.squeezed_sizes));
          const std::size_t n = g.values.empty() ? 0 : g.values[0].size();
          EXPECT_TRUE(close_to(y, hw::test::reduce_groups(g, ref), out_dtype(dt), n, std::max(std::abs(lo), hi)));
        }
      }
    }
  }
}

DType same(DType dt) { return dt; }
DType sum_dtype(DType dt) { return hw::is_floating_point(dt) ? dt : hw::kInt64; }

const std::vector<DType> kFloats = {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kFloat16};
const std::vector<DType> kAll = {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kInt32, hw::kInt64, hw::kUInt8,
                                 hw::kBool};

double ref_prod(const std::vector<double>& v) {
  double p = 1;
  for (double x : v) p *= x;
  return p;
}
double ref_max(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double ref_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
// std::max_element / min_element return the first extremum, as PyTorch's indices.
double ref_argmax(const std::vector<double>& v) {
  return static_cast<double>(std::max_element(v.begin(), v.end()) - v.begin());
}
double ref_argmin(const std::vector<double>& v) {
  return static_cast<double>(std::min_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST(ReductionOps, SumOverEveryDimSubset) {
  check_reduction("sum", [](const Tensor& x, const Dims& d, bool k) { return hw::sum(x, d, k); }, hw::test::ref_sum,
                  kAll, sum_dtype, -5, 5);
  check_reduction("Tensor::sum", [](const Tensor& x, const Dims& d, bool k) { return x.sum(d, k); },
                  hw::test::ref_sum, {hw::kFloat32}, same);
}

TEST(ReductionOps, SumWithDtype) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const Tensor x = hw::test::random_tensor({4, 7}, hw::kFloat32, rng);
  const Tensor y = x.sum({1}, false, hw::kFloat64);
  EXPECT_EQ(y.dtype(), hw::kFloat64);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y),
                                  hw::test::reduce_groups(hw::test::group_values(x, {1}), hw::test::ref_sum), 1e-12,
                                  1e-12));
  const Tensor xi = hw::test::random_tensor({5, 3}, hw::kInt32, rng, -100, 100);
  const Tensor yi = xi.sum(hw::kFloat32);
  EXPECT_EQ(yi.dtype(), hw::kFloat32);
  EXPECT_DOUBLE_EQ(yi.item<double>(), hw::test::ref_sum(hw::test::values_of(xi)));
  EXPECT_EQ(xi.sum({0}, true, hw::kInt32).dtype(), hw::kInt32);
  EXPECT_EQ(hw::ones({3}, {.dtype = hw::kBool}).sum().item<std::int64_t>(), 3);
}

TEST(ReductionOps, LongFloatSumsStayAccurateAndThreadIndependent) {
  // A sequential float sum of 2^21 values of 0.1 is off by percents; blocks and a pairwise fold
  // keep it near float's epsilon.
  const Tensor x = hw::full({1 << 21}, 0.1, {.dtype = hw::kFloat32});
  const double expected = static_cast<double>(0.1f) * (1 << 21);
  EXPECT_NEAR(x.sum().item<double>(), expected, expected * 1e-5);
  const Tensor cols = x.view({2048, 1024}).sum({0});
  EXPECT_NEAR(cols[5].item<double>(), 2048 * static_cast<double>(0.1f), 2048 * 1e-5);
  // The same bits with one thread or several.
  const int threads = hw::get_num_threads();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const Tensor r = hw::test::random_tensor({1 << 20}, hw::kFloat32, rng);
  hw::set_num_threads(1);
  const float one_thread = r.sum().item<float>();
  hw::set_num_threads(std::max(2, threads));
  EXPECT_EQ(r.sum().item<float>(), one_thread);
  hw::set_num_threads(threads);
}

TEST(ReductionOps, LargeInputsSplitOverThreads) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (const Dims& sizes : {Dims{300, 1000}, Dims{3, 100000}, Dims{100000, 3}}) {
    const Tensor x = hw::test::random_tensor(sizes, hw::kFloat32, rng);
    for (const Dims& dims : {Dims{0}, Dims{1}, Dims{}}) {
      const auto g = hw::test::group_values(x, dims);
      const std::size_t n = g.values[0].size();
      EXPECT_TRUE(close_to(x.sum(dims), hw::test::reduce_groups(g, hw::test::ref_sum), hw::kFloat32, n, 2));
      EXPECT_TRUE(close_to(x.amax(dims), hw::test::reduce_groups(g, ref_max), hw::kFloat32, 1, 0));
    }
    const auto g1 = hw::test::group_values(x, {1});
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(std::get<1>(x.max(1))),
                                    hw::test::reduce_groups(g1, ref_argmax), 0, 0));
    EXPECT_EQ(x.argmin().item<double>(), ref_argmin(hw::test::values_of(x)));
  }
}

TEST(ReductionOps, Mean) {
  check_reduction("mean", [](const Tensor& x, const Dims& d, bool k) { return hw::mean(x, d, k); },
                  hw::test::ref_mean, kFloats, same, -2, 2, /*skip_empty_groups=*/true);
  EXPECT_TRUE(std::isnan(hw::empty({0}).mean().item<double>()));
  EXPECT_EQ(hw::ones({2, 3}).mean({-1}, true).sizes(), hw::IntArrayRef({2, 1}));
}

TEST(ReductionOps, Prod) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (DType dt : {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kInt32, hw::kInt64, hw::kBool}) {
    const bool fp = hw::is_floating_point(dt);
    for (const Case& c : kCases) {
      const Tensor x = make_input(c, dt, rng, fp ? 0.5 : -3, fp ? 1.5 : 4);
      SCOPED_TRACE(::testing::Message() << dt << " " << hw::IntArrayRef(c.sizes));
      const Tensor all = x.prod();
      EXPECT_EQ(all.dtype(), sum_dtype(dt));
      EXPECT_TRUE(close_to(all, {ref_prod(hw::test::values_of(x))}, sum_dtype(dt), 1, 1));
      for (std::int64_t d = -dims_of(x); d < dims_of(x); ++d) {
        for (bool keepdim : {false, true}) {
          const auto g = hw::test::group_values(x, {d});
          const Tensor y = x.prod(d, keepdim);
          EXPECT_EQ(y.sizes(), hw::IntArrayRef(keepdim ? g.kept_sizes : g.squeezed_sizes));
          EXPECT_TRUE(close_to(y, hw::test::reduce_groups(g, ref_prod), sum_dtype(dt), 1, 1));
        }
      }
    }
  }
  EXPECT_EQ(hw::empty({0}).prod().item<double>(), 1.0);
  EXPECT_EQ(hw::empty({0}).sum().item<double>(), 0.0);
  EXPECT_EQ(hw::empty({0, 3}).prod(0).to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

TEST(ReductionOps, MaxMinWithIndices) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  // Small integer ranges make ties, whose first index must win.
  for (DType dt : {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kInt32, hw::kInt64, hw::kUInt8, hw::kBool}) {
    for (const Case& c : kCases) {
      if (c.sizes.size() == 2 && c.sizes[0] == 0) continue;
      const Tensor x = make_input(c, dt, rng, 0, hw::is_floating_point(dt) ? 2 : 4);
      SCOPED_TRACE(::testing::Message() << dt << " " << hw::IntArrayRef(c.sizes));
      const std::vector<double> all = hw::test::values_of(x);
      EXPECT_EQ(x.max().item<double>(), ref_max(all));
      EXPECT_EQ(x.min().item<double>(), ref_min(all));
      EXPECT_EQ(x.argmax().item<double>(), ref_argmax(all));
      EXPECT_EQ(x.argmin().item<double>(), ref_argmin(all));
      EXPECT_EQ(x.max().dtype(), dt);
      EXPECT_EQ(x.argmax().dtype(), hw::kInt64);
      for (std::int64_t d = -dims_of(x); d < dims_of(x); ++d) {
        for (bool keepdim : {false, true}) {
          const auto g = hw::test::group_values(x, {d});
          const auto sizes = hw::IntArrayRef(keepdim ? g.kept_sizes : g.squeezed_sizes);
          const auto [vmax, imax] = x.max(d, keepdim);
          const auto [vmin, imin] = x.min(d, keepdim);
          EXPECT_EQ(vmax.sizes(), sizes);
          EXPECT_EQ(imin.sizes(), sizes);
          EXPECT_EQ(imax.dtype(), hw::kInt64);
          EXPECT_EQ(hw::test::values_of(vmax), hw::test::reduce_groups(g, ref_max));
          EXPECT_EQ(hw::test::values_of(vmin), hw::test::reduce_groups(g, ref_min));
          EXPECT_EQ(hw::test::values_of(imax), hw::test::reduce_groups(g, ref_argmax));
          EXPECT_EQ(hw::test::values_of(imin), hw::test::reduce_groups(g, ref_argmin));
          EXPECT_EQ(hw::test::values_of(x.argmax(d, keepdim)), hw::test::reduce_groups(g, ref_argmax));
          EXPECT_EQ(hw::test::values_of(x.argmin(d, keepdim)), hw::test::reduce_groups(g, ref_argmin));
        }
      }
    }
  }
  // Over a non-empty dim of a zero-size tensor: an empty result.
  const auto [v, i] = hw::empty({0, 3}).max(1);
  EXPECT_EQ(v.sizes(), hw::IntArrayRef({0}));
  EXPECT_EQ(i.sizes(), hw::IntArrayRef({0}));
}

TEST(ReductionOps, MaxMinPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = hw::tensor(std::vector<double>{1, nan, 5, nan, -2, 7}, {2, 3});
  const auto [values, indices] = x.max(1);
  EXPECT_TRUE(std::isnan(values[0].item<double>()));
  EXPECT_TRUE(std::isnan(values[1].item<double>()));
  EXPECT_EQ(indices.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(std::get<1>(x.min(0)).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0}));
  EXPECT_TRUE(std::isnan(x.to(hw::kFloat32).max().item<double>()));
  EXPECT_EQ(x.argmin().item<std::int64_t>(), 1);
  EXPECT_TRUE(std::isnan(x.amax({0})[0].item<double>()));
  // A NaN far into a long run (split over threads) still wins over larger values around it.
  Tensor long_run = hw::arange(100000, {.dtype = hw::kFloat32});
  long_run.narrow(0, 77777, 1).fill_(nan);
  EXPECT_EQ(long_run.argmax().item<std::int64_t>(), 77777);
  EXPECT_TRUE(std::isnan(long_run.min().item<double>()));
}

TEST(ReductionOps, AmaxAmin) {
  check_reduction("amax", [](const Tensor& x, const Dims& d, bool k) { return x.amax(d, k); }, ref_max, kAll, same,
                  -5, 5, true);
  check_reduction("amin", [](const Tensor& x, const Dims& d, bool k) { return x.amin(d, k); }, ref_min, kAll, same,
                  -5, 5, true);
}

TEST(ReductionOps, VarStd) {
  for (std::int64_t correction : {0, 1, 2}) {
    check_reduction(
        "var", [correction](const Tensor& x, const Dims& d, bool k) { return x.var(d, correction, k); },
        [correction](const std::vector<double>& v) { return hw::test::ref_var(v, correction); }, kFloats, same, -2, 2,
        true);
    check_reduction(
        "std", [correction](const Tensor& x, const Dims& d, bool k) { return x.std(d, correction, k); },
        [correction](const std::vector<double>& v) { return std::sqrt(hw::test::ref_var(v, correction)); }, kFloats,
        same, -2, 2, true);
  }
  // One element with Bessel's correction: 0 / 0.
  EXPECT_TRUE(std::isnan(hw::ones({1}).var().item<double>()));
}

TEST(ReductionOps, AllAny) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  auto truthy = [](double a) { return a != 0; };
  auto ref_all = [&](const std::vector<double>& v) { return std::all_of(v.begin(), v.end(), truthy) ? 1.0 : 0.0; };
  auto ref_any = [&](const std::vector<double>& v) { return std::any_of(v.begin(), v.end(), truthy) ? 1.0 : 0.0; };
  for (DType dt : {hw::kBool, hw::kInt32, hw::kFloat32, hw::kBFloat16}) {
    for (const Case& c : kCases) {
      // Mostly non-zero, so that all() is sometimes true.
      Tensor x = make_input(c, dt, rng, 0, hw::is_floating_point(dt) ? 1 : 6);
      if (hw::is_floating_point(dt)) x = x.gt(0.1).to(dt);
      SCOPED_TRACE(::testing::Message() << dt << " " << hw::IntArrayRef(c.sizes));
      EXPECT_EQ(x.all().dtype(), hw::kBool);
      EXPECT_EQ(x.all().item<double>(), ref_all(hw::test::values_of(x)));
      EXPECT_EQ(x.any().item<double>(), ref_any(hw::test::values_of(x)));
      for (std::int64_t d = -dims_of(x); d < dims_of(x); ++d) {
        for (bool keepdim : {false, true}) {
          const auto g = hw::test::group_values(x, {d});
          EXPECT_EQ(x.all(d, keepdim).sizes(), hw::IntArrayRef(keepdim ? g.kept_sizes : g.squeezed_sizes));
          EXPECT_EQ(hw::test::values_of(x.all(d, keepdim)), hw::test::reduce_groups(g, ref_all));
          EXPECT_EQ(hw::test::values_of(x.any(d, keepdim)), hw::test::reduce_groups(g, ref_any));
        }
      }
    }
  }
  EXPECT_TRUE(hw::empty({0}).all().item<bool>());
  EXPECT_FALSE(hw::empty({0}).any().item<bool>());
  EXPECT_TRUE(hw::full({2}, std::numeric_limits<double>::quiet_NaN()).all().item<bool>());
}

TEST(ReductionOps, Norm) {
  for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5}) {
    SCOPED_TRACE(p);
    check_reduction(
        "norm", [p](const Tensor& x, const Dims& d, bool k) { return x.norm(p, d, k); },
        [p](const std::vector<double>& v) {
          if (std::isinf(p)) {
            double m = p > 0 ? 0 : kInf;
            for (double a : v) m = p > 0 ? std::max(m, std::abs(a)) : std::min(m, std::abs(a));
            return m;
          }
          double s = 0;
          for (double a : v) s += p == 0 ? (a != 0 ? 1.0 : 0.0) : std::pow(std::abs(a), p);
          return p == 0 ? s : std::pow(s, 1 / p);
        },
        kFloats, same, -2, 2, true);
  }
}

TEST(ReductionOps, LogSumExp) {
  auto ref = [](const std::vector<double>& v) {
    double m = -kInf;
    for (double a : v) m = std::max(m, a);
    double s = 0;
    for (double a : v) s += std::exp(a - m);
    return m + std::log(s);
  };
  check_reduction("logsumexp", [](const Tensor& x, const Dims& d, bool k) { return hw::logsumexp(x, d, k); }, ref,
                  kFloats, same, -3, 3, true);
  // Stable for large values; -inf everywhere gives -inf; an empty reduction gives -inf; ints give float32.
  EXPECT_NEAR(hw::tensor({1000.0, 1000.0}).logsumexp({0}).item<double>(), 1000 + std::log(2.0), 1e-9);
  EXPECT_EQ(hw::full({3}, -kInf).logsumexp({0}).item<double>(), -kInf);
  EXPECT_EQ(hw::empty({0, 2}).logsumexp({0}).to_vector<float>(), (std::vector<float>{-INFINITY, -INFINITY}));
  const Tensor ints = hw::tensor(std::vector<std::int64_t>{0, 0});
  EXPECT_EQ(ints.logsumexp({0}).dtype(), hw::kFloat32);
  EXPECT_NEAR(ints.logsumexp({0}).item<double>(), std::log(2.0), 1e-6);
}

TEST(ReductionOps, Errors) {
  const Tensor x = hw::ones({2, 3});
  using hw::test::throws_with;
  const char* range = "Dimension out of range (expected to be in range of [-2, 1], but got 2)";
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.sum({2}); }, range));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.max(2); }, range));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.amin({-3}); }, "but got -3"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.var({5}); }, "but got 5"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.logsumexp({7}); }, "but got 7"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.norm(2, {2}); }, "but got 2"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.all(-3); }, "but got -3"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { x.sum({1, -1}); }, "sum(): dim 1 appears multiple times in the list of dims"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { x.mean({0, 0}); }, "dim 0 appears multiple times"));
  const Tensor ints = hw::ones({3}, {.dtype = hw::kInt64});
  EXPECT_TRUE(throws_with<hw::Error>([&] { ints.mean(); },
                                     "mean(): could not infer output dtype. Input dtype must be either a floating point "
                                     "or complex dtype. Got: int64"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { ints.var(); }, "var(): std and var only support floating point"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { ints.std(); }, "std(): std and var only support floating point"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { ints.norm(); }, "norm(): Expected a floating point tensor as input. Got int64"));
  const Tensor empty = hw::empty({0, 3});
  EXPECT_TRUE(throws_with<hw::Error>([&] { empty.max(); },
                                     "max(): Expected reduction dim to be specified for input.numel() == 0."));
  EXPECT_TRUE(throws_with<hw::Error>([&] { empty.argmin(); }, "argmin(): Expected reduction dim to be specified"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { empty.min(0); }, "min(): Expected reduction dim 0 to have non-zero size."));
  EXPECT_TRUE(throws_with<hw::Error>([&] { empty.amax({-2}); }, "amax(): Expected reduction dim 0 to have non-zero size."));
  const Tensor undefined;
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::sum(undefined); }, "sum: argument 'self' is an undefined tensor"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { undefined.max(); }, "max: argument 'self' is an undefined tensor"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { undefined.var(); }, "var: argument 'self' is an undefined tensor"));
}

TEST(ReductionOps, ZeroDimAndOneElement) {
  const Tensor s = hw::scalar_tensor(3.5);
  EXPECT_EQ(s.sum().item<double>(), 3.5);
  EXPECT_EQ(s.sum({0}).dim(), 0);
  EXPECT_EQ(s.sum({-1}, true).dim(), 0);
  EXPECT_EQ(s.max().item<double>(), 3.5);
  EXPECT_EQ(std::get<1>(s.max(0)).item<std::int64_t>(), 0);
  EXPECT_EQ(s.prod(0).item<double>(), 3.5);
  EXPECT_EQ(s.mean().item<double>(), 3.5);
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { s.sum({1}); },
                                                    "expected to be in range of [-1, 0], but got 1"));
}
