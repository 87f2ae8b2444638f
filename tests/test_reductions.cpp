// Reductions (sum, mean, prod, max/min, amax/amin, argmax/argmin, all/any, var/std, norm,
// logsumexp) against float64 references computed here on fresh random inputs, over every dim
// (negative too), several dims, keepdim, contiguous / non-contiguous / transposed inputs, and
// zero-size and one-element tensors; then every error path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "ops/tensor_creation_log.h"
#include "support/test_support.h"

namespace hw = hwaro;
using hw::test::values_of;
using hw::DType;
using hw::IntArrayRef;

namespace {

using Dims = std::vector<std::int64_t>;
using Group = std::vector<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<bool> reduced_mask(std::int64_t ndim, const Dims& dims) {
  std::vector<bool> reduced(static_cast<std::size_t>(ndim), dims.empty());
  for (std::int64_t d : dims) reduced[static_cast<std::size_t>(d < 0 ? d + ndim : d)] = true;
  return reduced;
}

// The row-major elements of `x` grouped by output element; each group in row-major order of
// the reduced dims (the order argmax indexes).
std::vector<Group> groups_of(const hw::Tensor& x, const Dims& dims) {
  const std::vector<double> v = values_of(x);
  const std::int64_t ndim = x.dim();
  const std::vector<bool> reduced = reduced_mask(ndim, dims);
  std::int64_t n_out = 1;
  for (std::int64_t d = 0; d < ndim; ++d) n_out *= reduced[d] ? 1 : x.size(d);
  std::vector<Group> groups(static_cast<std::size_t>(n_out));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(ndim), 0);
  for (double value : v) {
    std::int64_t out = 0;
    for (std::int64_t d = 0; d < ndim; ++d) out = reduced[d] ? out : out * x.size(d) + idx[d];
    groups[static_cast<std::size_t>(out)].push_back(value);
    for (std::int64_t d = ndim - 1; d >= 0; --d) {
      if (++idx[d] < x.size(d)) break;
      idx[d] = 0;
    }
  }
  return groups;
}

std::vector<std::int64_t> expected_sizes(const hw::Tensor& x, const Dims& dims, bool keepdim) {
  const std::vector<bool> reduced = reduced_mask(x.dim(), dims);
  std::vector<std::int64_t> out;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    if (!reduced[d]) out.push_back(x.size(d));
    else if (keepdim) out.push_back(1);
  }
  return out;
}

double ref_sum(const Group& g) { return std::accumulate(g.begin(), g.end(), 0.0); }
double ref_abs_sum(const Group& g) {
  double s = 0;
  for (double v : g) s += std::abs(v);
  return s;
}
double ref_mean(const Group& g) { return ref_sum(g) / static_cast<double>(g.size()); }
double ref_var(const Group& g, std::int64_t correction) {
  const double m = ref_mean(g);
  double s = 0;
  for (double v : g) s += (v - m) * (v - m);
  return s / std::max<double>(0.0, static_cast<double>(g.size()) - static_cast<double>(correction));
}
double ref_max(const Group& g) { return *std::max_element(g.begin(), g.end()); }
double ref_min(const Group& g) { return *std::min_element(g.begin(), g.end()); }
double ref_argmax(const Group& g) { return static_cast<double>(std::max_element(g.begin(), g.end()) - g.begin()); }
double ref_argmin(const Group& g) { return static_cast<double>(std::min_element(g.begin(), g.end()) - g.begin()); }
double ref_lse(const Group& g) {
  const double m = ref_max(g);
  double s = 0;
  for (double v : g) s += std::exp(v - m);
  return m + std::log(s);
}
double ref_pnorm(const Group& g, double p) {
  double s = 0;
  for (double v : g) s += std::pow(std::abs(v), p);
  return std::pow(s, 1.0 / p);
}

// Checks out == ref(group) for each group, with tolerance rtol * scale(group) + atol.
void expect_reduced(const hw::Tensor& out, const hw::Tensor& x, const Dims& dims, bool keepdim, DType expected_dtype,
                    const std::function<double(const Group&)>& ref, double rtol, double atol,
                    const std::function<double(const Group&)>& scale) {
  SCOPED_TRACE(::testing::Message() << "sizes " << x.sizes() << " dims " << ::testing::PrintToString(dims)
                                    << " keepdim " << keepdim << " dtype " << x.dtype()
                                    << " contiguous " << x.is_contiguous());
  ASSERT_EQ(out.dtype(), expected_dtype);
  const std::vector<std::int64_t> sizes = expected_sizes(x, dims, keepdim);
  ASSERT_EQ(std::vector<std::int64_t>(out.sizes().begin(), out.sizes().end()), sizes);
  const std::vector<Group> groups = groups_of(x, dims);
  const std::vector<double> actual = values_of(out);
  ASSERT_EQ(actual.size(), groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double e = ref(groups[i]);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(actual[i])) << "element " << i;
    } else if (std::isinf(e)) {
      EXPECT_EQ(actual[i], e) << "element " << i;
    } else {
      EXPECT_NEAR(actual[i], e, rtol * scale(groups[i]) + atol) << "element " << i;
    }
  }
}

DType sum_dtype(DType dt) { return hw::is_floating_point(dt) ? dt : hw::kInt64; }

class ReductionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = hw::test::fresh_seed();
    rng_.seed(seed_);
  }
  hw::Tensor random(IntArrayRef sizes, DType dtype, double lo = -2.0, double hi = 2.0) {
    return hw::test::random_tensor(sizes, dtype, rng_, lo, hi);
  }
  // The same values in three layouts: contiguous, strided, and a transposed view (other sizes).
  std::vector<hw::Tensor> layouts(IntArrayRef sizes, DType dtype, double lo = -2.0, double hi = 2.0) {
    hw::Tensor x = random(sizes, dtype, lo, hi);
    return {x, hw::test::non_contiguous_copy(x), random(sizes, dtype, lo, hi).transpose(0, -1)};
  }
  // Every single dim (both spellings), some dim sets, and all dims, for a 3-d input.
  static std::vector<Dims> dim_sets() { return {{}, {0}, {1}, {2}, {-1}, {-2}, {0, 2}, {-1, 0}, {1, 2}, {0, 1, 2}}; }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

const std::vector<DType> kFloatTypes = {hw::kFloat32, hw::kFloat64, hw::kBFloat16};
const std::vector<DType> kAllNumeric = {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kInt32, hw::kInt64};

TEST_F(ReductionTest, SumMatchesReference) {
  SCOPED_TRACE(seed_);
  for (DType dt : kAllNumeric) {
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt, -5.0, 5.0)) {
      for (const Dims& dims : dim_sets()) {
        for (bool keepdim : {false, true}) {
          expect_reduced(x.sum(dims, keepdim), x, dims, keepdim, sum_dtype(dt), ref_sum, hw::test::rtol_for(dt),
                         hw::test::atol_for(dt), ref_abs_sum);
        }
      }
    }
  }
  const hw::Tensor b = random({4, 6}, hw::kBool);
  expect_reduced(b.sum(), b, {}, false, hw::kInt64, ref_sum, 0, 0, ref_abs_sum);
  expect_reduced(b.sum({1}), b, {1}, false, hw::kInt64, ref_sum, 0, 0, ref_abs_sum);
}

TEST_F(ReductionTest, SumWithDtypeAndFreeFunction) {
  SCOPED_TRACE(seed_);
  const hw::Tensor x = random({6, 7}, hw::kInt32, -100, 100);
  expect_reduced(x.sum(hw::kFloat64), x, {}, false, hw::kFloat64, ref_sum, 1e-12, 0, ref_abs_sum);
  expect_reduced(hw::sum(x, {0}, true, hw::kFloat32), x, {0}, true, hw::kFloat32, ref_sum, 1e-6, 0, ref_abs_sum);
  const hw::Tensor f = random({6, 7}, hw::kBFloat16);
  expect_reduced(f.sum({1}, false, hw::kFloat32), f, {1}, false, hw::kFloat32, ref_sum, 1e-6, 1e-6, ref_abs_sum);
}

TEST_F(ReductionTest, LongFloat32SumStaysAccurate) {
  SCOPED_TRACE(seed_);
  // 2^20 positive values: a naive float loop drifts by ~n * eps relative; blocked sums by far less.
  const hw::Tensor x = random({1 << 20}, hw::kFloat32, 0.0, 1.0);
  const double e = ref_sum(values_of(x));
  EXPECT_NEAR(x.sum().item<float>(), e, 2e-6 * e);
  const hw::Tensor rows = x.reshape({16, 1 << 16});
  expect_reduced(rows.sum({1}), rows, {1}, false, hw::kFloat32, ref_sum, 2e-6, 0, ref_abs_sum);
  const hw::Tensor cols = x.reshape({1 << 14, 64});
  expect_reduced(cols.sum({0}), cols, {0}, false, hw::kFloat32, ref_sum, 2e-6, 0, ref_abs_sum);
}

// Integer sums and products wrap on overflow (two's complement), as PyTorch's; a signed overflow
// in C++ is undefined, which CI's UBSan build would abort on.
TEST(IntegerReductions, SumAndProdWrapOnOverflow) {
  constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max(), min64 = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(hw::tensor(std::vector<std::int64_t>{max64, 1}).sum().item<std::int64_t>(), min64);
  EXPECT_EQ(hw::tensor(std::vector<std::int64_t>{std::int64_t{1} << 62, 4, 7}).prod().item<std::int64_t>(), 0);
  EXPECT_EQ(hw::tensor(std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max(), 1}).sum().item<std::int64_t>(),
            std::int64_t{1} << 31) << "int32 sums are int64, so this one does not overflow";
}

TEST_F(ReductionTest, MeanMatchesReference) {
  SCOPED_TRACE(seed_);
  for (DType dt : kFloatTypes) {
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt)) {
      for (const Dims& dims : dim_sets()) {
        for (bool keepdim : {false, true}) {
          expect_reduced(x.mean(dims, keepdim), x, dims, keepdim, dt, ref_mean, hw::test::rtol_for(dt),
                         hw::test::atol_for(dt), [](const Group& g) { return ref_abs_sum(g) / g.size(); });
        }
      }
    }
  }
  const hw::Tensor x = random({4, 3}, hw::kFloat64);
  EXPECT_NEAR(hw::mean(x).item<double>(), ref_mean(values_of(x)), 1e-12);
}

TEST_F(ReductionTest, ProdMatchesReference) {
  SCOPED_TRACE(seed_);
  auto ref_prod = [](const Group& g) { return std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<>()); };
  auto scale = [](const Group& g) {
    double s = 1;
    for (double v : g) s *= std::abs(v);
    return s * g.size();
  };
  for (DType dt : {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kInt64}) {
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt, -3.0, 3.0)) {
      const DType out_dt = sum_dtype(dt);
      expect_reduced(x.prod(), x, {}, false, out_dt, ref_prod, hw::test::rtol_for(dt), hw::test::atol_for(dt), scale);
      for (std::int64_t d = -3; d < 3; ++d) {
        for (bool keepdim : {false, true}) {
          expect_reduced(x.prod(d, keepdim), x, {d}, keepdim, out_dt, ref_prod, hw::test::rtol_for(dt),
                         hw::test::atol_for(dt), scale);
        }
      }
    }
  }
}

TEST_F(ReductionTest, MaxMinWithIndices) {
  SCOPED_TRACE(seed_);
  auto one = [](const Group&) { return 1.0; };
  for (DType dt : kAllNumeric) {
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt, -50.0, 50.0)) {
      expect_reduced(x.max(), x, {}, false, dt, ref_max, 0, 0, one);
      expect_reduced(x.min(), x, {}, false, dt, ref_min, 0, 0, one);
      expect_reduced(x.argmax(), x, {}, false, hw::kInt64, ref_argmax, 0, 0, one);
      expect_reduced(x.argmin(), x, {}, false, hw::kInt64, ref_argmin, 0, 0, one);
      for (std::int64_t d = -3; d < 3; ++d) {
        for (bool keepdim : {false, true}) {
          const auto [vmax, imax] = x.max(d, keepdim);
          const auto [vmin, imin] = x.min(d, keepdim);
          expect_reduced(vmax, x, {d}, keepdim, dt, ref_max, 0, 0, one);
          expect_reduced(imax, x, {d}, keepdim, hw::kInt64, ref_argmax, 0, 0, one);
          expect_reduced(vmin, x, {d}, keepdim, dt, ref_min, 0, 0, one);
          expect_reduced(imin, x, {d}, keepdim, hw::kInt64, ref_argmin, 0, 0, one);
          expect_reduced(x.argmax(d, keepdim), x, {d}, keepdim, hw::kInt64, ref_argmax, 0, 0, one);
          expect_reduced(x.argmin(d, keepdim), x, {d}, keepdim, hw::kInt64, ref_argmin, 0, 0, one);
        }
      }
      for (const Dims& dims : dim_sets()) {
        expect_reduced(x.amax(dims, true), x, dims, true, dt, ref_max, 0, 0, one);
        expect_reduced(x.amin(dims), x, dims, false, dt, ref_min, 0, 0, one);
      }
    }
  }
}

TEST_F(ReductionTest, MaxTiesTakeFirstIndexAndNaNPropagates) {
  const hw::Tensor x = hw::tensor<float>({1, 3, 3, 0, 3});
  EXPECT_EQ(x.argmax().item<std::int64_t>(), 1);
  EXPECT_EQ(x.argmin().item<std::int64_t>(), 3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const hw::Tensor y = hw::tensor<float>({1, nan, 5, nan});
  EXPECT_TRUE(std::isnan(y.max().item<float>()));
  EXPECT_TRUE(std::isnan(y.min().item<float>()));
  EXPECT_EQ(y.argmax().item<std::int64_t>(), 1);
  EXPECT_EQ(y.argmin().item<std::int64_t>(), 1);
  // Long runs cross the kernel's block boundaries; ties and NaNs must still pick the first.
  hw::Tensor big = hw::zeros({20000});
  big.narrow(0, 9000, 1).fill_(7);
  big.narrow(0, 15000, 1).fill_(7);
  EXPECT_EQ(big.argmax().item<std::int64_t>(), 9000);
  big.narrow(0, 12000, 1).fill_(nan);
  EXPECT_EQ(big.argmax().item<std::int64_t>(), 12000);
  EXPECT_EQ(big.argmin().item<std::int64_t>(), 12000);
}

TEST_F(ReductionTest, AllAny) {
  SCOPED_TRACE(seed_);
  auto ref_all = [](const Group& g) { return std::all_of(g.begin(), g.end(), [](double v) { return v != 0; }) ? 1.0 : 0.0; };
  auto ref_any = [](const Group& g) { return std::any_of(g.begin(), g.end(), [](double v) { return v != 0; }) ? 1.0 : 0.0; };
  auto one = [](const Group&) { return 1.0; };
  for (DType dt : {hw::kBool, hw::kInt32, hw::kFloat32}) {
    // Mostly non-zero integers so that both outcomes occur.
    for (const hw::Tensor& x : layouts({3, 4, 2}, dt, 0.0, dt == hw::kBool ? 1.0 : 6.0)) {
      expect_reduced(x.all(), x, {}, false, hw::kBool, ref_all, 0, 0, one);
      expect_reduced(x.any(), x, {}, false, hw::kBool, ref_any, 0, 0, one);
      for (std::int64_t d = -3; d < 3; ++d) {
        for (bool keepdim : {false, true}) {
          expect_reduced(x.all(d, keepdim), x, {d}, keepdim, hw::kBool, ref_all, 0, 0, one);
          expect_reduced(x.any(d, keepdim), x, {d}, keepdim, hw::kBool, ref_any, 0, 0, one);
        }
      }
    }
  }
  EXPECT_TRUE(hw::zeros({0}).all().item<bool>());
  EXPECT_FALSE(hw::zeros({0}).any().item<bool>());
}

TEST_F(ReductionTest, VarStd) {
  SCOPED_TRACE(seed_);
  for (DType dt : kFloatTypes) {
    const double rtol = hw::test::rtol_for(dt) * 4, atol = hw::test::atol_for(dt) * 4;
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt)) {
      for (const Dims& dims : dim_sets()) {
        for (std::int64_t correction : {0, 1}) {
          for (bool keepdim : {false, true}) {
            auto var = [&](const Group& g) { return ref_var(g, correction); };
            expect_reduced(x.var(dims, correction, keepdim), x, dims, keepdim, dt, var, rtol, atol, var);
            auto sd = [&](const Group& g) { return std::sqrt(ref_var(g, correction)); };
            expect_reduced(x.std(dims, correction, keepdim), x, dims, keepdim, dt, sd, rtol, atol, sd);
          }
        }
      }
    }
  }
  // One element with correction 1: 0 / 0.
  EXPECT_TRUE(std::isnan(hw::ones({1}).var().item<float>()));
}

TEST_F(ReductionTest, Norm) {
  SCOPED_TRACE(seed_);
  for (DType dt : kFloatTypes) {
    const double rtol = hw::test::rtol_for(dt) * 4, atol = hw::test::atol_for(dt);
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt)) {
      for (const Dims& dims : dim_sets()) {
        for (bool keepdim : {false, true}) {
          auto n2 = [](const Group& g) { return ref_pnorm(g, 2); };
          auto n1 = [](const Group& g) { return ref_pnorm(g, 1); };
          auto n3 = [](const Group& g) { return ref_pnorm(g, 3); };
          auto ninf = [](const Group& g) { return std::max(std::abs(ref_max(g)), std::abs(ref_min(g))); };
          expect_reduced(x.norm(2, dims, keepdim), x, dims, keepdim, dt, n2, rtol, atol, n2);
          expect_reduced(x.norm(1, dims, keepdim), x, dims, keepdim, dt, n1, rtol, atol, n1);
          expect_reduced(x.norm(3.0, dims, keepdim), x, dims, keepdim, dt, n3, rtol, atol, n3);
          expect_reduced(x.norm(kInf, dims, keepdim), x, dims, keepdim, dt, ninf, rtol, atol, ninf);
        }
      }
    }
  }
  const hw::Tensor x = random({7}, hw::kFloat64);
  EXPECT_NEAR(x.norm().item<double>(), ref_pnorm(values_of(x), 2), 1e-12);
}

TEST_F(ReductionTest, LogSumExp) {
  SCOPED_TRACE(seed_);
  for (DType dt : kFloatTypes) {
    for (const hw::Tensor& x : layouts({3, 5, 4}, dt, -20.0, 20.0)) {
      for (const Dims& dims : dim_sets()) {
        if (dims.empty()) continue;  // logsumexp takes explicit dims
        for (bool keepdim : {false, true}) {
          expect_reduced(hw::logsumexp(x, dims, keepdim), x, dims, keepdim, dt, ref_lse, hw::test::rtol_for(dt),
                         hw::test::atol_for(dt), [](const Group& g) { return std::abs(ref_lse(g)); });
        }
      }
    }
  }
  // Stable where exp overflows; -inf rows stay -inf; integers give float32.
  const hw::Tensor big = hw::tensor<float>({1000, 1000});
  EXPECT_NEAR(big.logsumexp({0}).item<float>(), 1000 + std::log(2.0), 1e-3);
  EXPECT_EQ(hw::full({3}, -kInf).logsumexp({0}).item<float>(), -kInf);
  const hw::Tensor i = hw::tensor<std::int64_t>({1, 2, 3});
  const hw::Tensor li = i.logsumexp({0});
  EXPECT_EQ(li.dtype(), hw::kFloat32);
  EXPECT_NEAR(li.item<float>(), ref_lse({1, 2, 3}), 1e-5);
}

TEST_F(ReductionTest, ZeroSizeAndOneElement) {
  const hw::Tensor e = hw::zeros({0, 3});
  EXPECT_EQ(e.sum().item<float>(), 0.0f);
  EXPECT_EQ(e.prod().item<float>(), 1.0f);
  const hw::Tensor s0 = e.sum({0});
  EXPECT_EQ(values_of(s0), std::vector<double>(3, 0.0));
  EXPECT_EQ(values_of(e.prod(0)), std::vector<double>(3, 1.0));
  EXPECT_EQ(e.sum({1}).sizes(), hw::IntArrayRef({0}));
  EXPECT_EQ(e.amax({1}).sizes(), hw::IntArrayRef({0}));  // reducing a non-empty dim of an empty tensor is fine
  EXPECT_TRUE(std::isnan(e.mean().item<float>()));
  EXPECT_EQ(hw::zeros({0}, {.dtype = hw::kInt32}).sum().dtype(), hw::kInt64);

  const hw::Tensor one = hw::full({1, 1}, 2.5);
  EXPECT_EQ(one.sum().item<float>(), 2.5f);
  EXPECT_EQ(one.max().item<float>(), 2.5f);
  EXPECT_EQ(one.argmax().item<std::int64_t>(), 0);
  EXPECT_EQ(one.norm().item<float>(), 2.5f);
  const hw::Tensor scalar = hw::full({}, 3.0);
  EXPECT_EQ(scalar.sum({0}).item<float>(), 3.0f);
  EXPECT_EQ(scalar.sum({-1}, true).dim(), 0);
  EXPECT_EQ(std::get<1>(scalar.max(0)).item<std::int64_t>(), 0);
}

// The tensors created on this thread while `reduce` runs (every new tensor goes through ops'
// new_tensor, which notes it in the open TensorCreationLog; temporaries that died count too),
// and whether the first of them is the result.
struct Created {
  std::size_t count;
  bool first_is_result;
};
Created tensors_created(const std::function<hw::Tensor()>& reduce) {
  hw::ops::TensorCreationLog log;
  const hw::Tensor result = reduce();
  return {log.created().size(), !log.created().empty() && log.created().front().lock() == result.impl_ptr()};
}

TEST_F(ReductionTest, LastDimAndAllDimsDoNotCopy) {
  // On a large contiguous tensor (the kernel's row and single-run paths, threaded), reductions over
  // a leading, trailing or whole block of dims create their outputs and nothing else: no
  // contiguous copy of the input. max/min's kernel writes the indices too, so those make two.
  SCOPED_TRACE(seed_);
  const hw::Tensor x = random({300, 1000}, hw::kFloat32);
  for (const Dims& dims : {Dims{-1}, Dims{0}, Dims{}}) {
    SCOPED_TRACE(dims.empty() ? std::string("all dims") : "dim " + std::to_string(dims[0]));
    const Created sum = tensors_created([&] { return x.sum(IntArrayRef(dims)); });
    EXPECT_EQ(sum.count, 1u);
    EXPECT_TRUE(sum.first_is_result);
    const Created amax = tensors_created([&] { return x.amax(IntArrayRef(dims)); });
    EXPECT_EQ(amax.count, 2u);  // values and indices
    EXPECT_TRUE(amax.first_is_result);
  }
  EXPECT_EQ(tensors_created([&] { return x.argmin(0); }).count, 2u);
  // The log does see a copy: a transposed input, or reduced dims that are not one block, is made
  // contiguous first (so the counts above could fail).
  EXPECT_EQ(tensors_created([&] { return x.t().sum({-1}); }).count, 2u);
  EXPECT_EQ(tensors_created([&] { return x.view({30, 10, 1000}).sum({0, 2}); }).count, 2u);

  expect_reduced(x.sum({-1}), x, {-1}, false, hw::kFloat32, ref_sum, 1e-5, 1e-6, ref_abs_sum);
  expect_reduced(x.amax({-1}), x, {-1}, false, hw::kFloat32, ref_max, 0, 0, [](const Group&) { return 1.0; });
  expect_reduced(x.sum({0}), x, {0}, false, hw::kFloat32, ref_sum, 1e-5, 1e-6, ref_abs_sum);
  expect_reduced(x.argmin(0), x, {0}, false, hw::kInt64, ref_argmin, 0, 0, [](const Group&) { return 1.0; });
}

TEST_F(ReductionTest, Errors) {
  using hw::test::throws_with;
  const hw::Tensor x = hw::zeros({2, 3});
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.sum({2}); },
                                          "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.max(-3); }, "but got -3"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.softmax(5); }, "but got 5"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.var({9}); }, "but got 9"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.norm(2, {-5}); }, "but got -5"));
  EXPECT_TRUE(throws_with<hw::IndexError>([&] { x.logsumexp({3}); }, "but got 3"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { x.sum({1, -1}); }, "sum(): dim 1 appears multiple times in the list of dims"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { x.amax({0, 0}); }, "amax(): dim 0 appears multiple times"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({2}, {.dtype = hw::kInt32}).mean(); },
                                     "mean(): could not infer output dtype. Input dtype must be either a floating point"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({2}, {.dtype = hw::kInt64}).var(); },
                                     "std and var only support floating point"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({2}, {.dtype = hw::kInt64}).norm(); },
                                     "norm(): Expected a floating point tensor as input"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({0}).max(); },
                                     "max(): Expected reduction dim to be specified for input.numel() == 0"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({0}).argmin(); }, "argmin(): Expected reduction dim"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({2, 0}).max(1); },
                                     "max(): Expected reduction dim 1 to have non-zero size."));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::zeros({0, 2}).amin({0}); }, "amin(): Expected reduction dim 0"));
  EXPECT_TRUE(throws_with<hw::Error>([&] { hw::Tensor().sum(); }, "sum"));
}

}  // namespace
