// max_pool2d (values and argmax indices), avg_pool2d and adaptive_avg_pool2d against float64
// loops on fresh random inputs over kernels, strides, paddings, dilations, non-square and
// single-image inputs; gradients by finite differences (max pooling's through the indices it
// kept, overlapping windows included); ceil_mode, count_include_pad and divisor_override; NaN;
// the modules; errors.
#include <cmath>
#include <limits>
#include <optional>

#include "support/test_support.h"
#include "support/window_reference.h"

namespace hw = hwaro;
namespace F = hw::nn::functional;
using hw::Tensor;
using hw::test::Window;

namespace {

struct PoolCase {
  std::int64_t n, c, h, w;
  Window g;
};

std::vector<PoolCase> max_cases() {
  return {
      {2, 3, 8, 8, {2, 2, 2, 2}},              // the CNN's pool
      {1, 2, 7, 9, {2, 2, 2, 2}},              // the same on odd sizes: the last row and column are left out
      {1, 1, 7, 9, {3, 2, 2, 1}},              // non-square, batch 1, overlapping rows
      {2, 2, 9, 8, {3, 3, 2, 2, 1, 1}},        // padding 1
      {2, 2, 10, 10, {3, 2, 1, 2, 1, 1, 2, 3}},  // dilation
      {3, 4, 5, 5, {5, 5, 5, 5}},              // one window covering everything
      // ceil_mode: a last, partial window on each axis; with padding; with the rule that drops a
      // window starting in the trailing padding (5 + 1 - 3 rounded up would give 3, PyTorch gives 2).
      {2, 2, 7, 9, {2, 2, 2, 2, 0, 0, 1, 1, true}},
      {1, 3, 8, 7, {3, 3, 2, 2, 1, 1, 1, 1, true}},
      {2, 1, 5, 5, {3, 3, 3, 3, 1, 1, 1, 1, true}},
  };
}

TEST(MaxPool2d, ValuesAndIndicesMatchTheReference) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const PoolCase& c : max_cases()) {
    for (hw::DType dt : {hw::kFloat64, hw::kFloat32, hw::kBFloat16}) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "kernel " << c.g.kh << "x" << c.g.kw << " stride " << c.g.sh << ","
                                          << c.g.sw << " pad " << c.g.ph << "," << c.g.pw << " dil " << c.g.dh << ","
                                          << c.g.dw << (c.g.ceil_mode ? " ceil_mode" : "") << " dtype " << dt
                                          << (strided ? " strided" : ""));
        Tensor x = hw::test::random_tensor({c.n, c.c, c.h, c.w}, dt, rng);
        if (strided) x = hw::test::non_contiguous_copy(x);
        const auto [values, indices] = hw::max_pool2d_with_indices(x, {c.g.kh, c.g.kw}, {c.g.sh, c.g.sw},
                                                                   {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.g.ceil_mode);
        ASSERT_EQ(values.sizes(), hw::IntArrayRef({c.n, c.c, c.g.out_h(c.h), c.g.out_w(c.w)}));
        ASSERT_EQ(indices.dtype(), hw::kInt64);
        const auto ref = hw::test::ref_max_pool2d(hw::test::values_of(x), c.n * c.c, c.h, c.w, c.g);
        EXPECT_TRUE(hw::test::all_close(hw::test::values_of(values), ref.values, 0, 0));
        // Ties are possible in bfloat16; there, the value at the index must be the maximum.
        const auto xv = hw::test::values_of(x);
        const auto iv = hw::test::values_of(indices);
        const std::int64_t per_plane = c.g.out_h(c.h) * c.g.out_w(c.w);
        for (std::size_t k = 0; k < iv.size(); ++k) {
          const auto plane = static_cast<std::int64_t>(k) / per_plane;
          if (dt != hw::kBFloat16) {
            ASSERT_EQ(static_cast<std::int64_t>(iv[k]), ref.indices[k]) << "output " << k;
          }
          ASSERT_EQ(xv[static_cast<std::size_t>(plane * c.h * c.w + static_cast<std::int64_t>(iv[k]))], ref.values[k]);
        }
        EXPECT_TRUE(hw::equal(
            F::max_pool2d(x, {c.g.kh, c.g.kw}, {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.g.ceil_mode),
            values));
      }
    }
  }
}

TEST(MaxPool2d, NaNIsTheMaximum) {
  Tensor x = hw::zeros({1, 1, 2, 4}, {.dtype = hw::kFloat64});
  x.data_ptr<double>()[1] = std::numeric_limits<double>::quiet_NaN();
  x.data_ptr<double>()[7] = 5.0;
  const auto [values, indices] = hw::max_pool2d_with_indices(x, {2});
  const auto v = hw::test::values_of(values);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 5.0);
  EXPECT_EQ(hw::test::values_of(indices), (std::vector<double>{1, 7}));
  // Two NaNs in one window: the last one's index, as PyTorch's kernels, and it gets the gradient.
  // Both the 2x2 kernel and the general one (a 3x3 window) are checked.
  for (std::int64_t k : {2, 3}) {
    SCOPED_TRACE(k);
    Tensor two = hw::ones({1, 1, k, k}, {.dtype = hw::kFloat64});
    two.data_ptr<double>()[0] = two.data_ptr<double>()[k * k - 2] = std::numeric_limits<double>::quiet_NaN();
    two.set_requires_grad(true);
    const auto [value, index] = hw::max_pool2d_with_indices(two, {k});
    EXPECT_TRUE(std::isnan(hw::test::values_of(value)[0]));
    EXPECT_EQ(hw::test::values_of(index), (std::vector<double>{static_cast<double>(k * k - 2)}));
    value.sum().backward();
    std::vector<double> expected(static_cast<std::size_t>(k * k), 0.0);
    expected[static_cast<std::size_t>(k * k - 2)] = 1.0;
    EXPECT_EQ(hw::test::values_of(two.grad()), expected);
  }
}

TEST(MaxPool2d, GradientsMatchFiniteDifferences) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const PoolCase& c : max_cases()) {
    Tensor x = hw::test::random_tensor({std::min<std::int64_t>(c.n, 2), 2, c.h, c.w}, hw::kFloat64, rng);
    x.set_requires_grad(true);
    const auto r = hw::autograd::gradcheck(
        [&](auto& v) {
          return F::max_pool2d(v[0], {c.g.kh, c.g.kw}, {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw},
                               c.g.ceil_mode);
        },
        {x});
    EXPECT_TRUE(r.ok) << "kernel " << c.g.kh << "x" << c.g.kw << ": " << r.message;
  }
}

// As PyTorch's MaxPool2d on a zero batch: an empty output, and backward gives an empty gradient.
TEST(MaxPool2d, AnEmptyBatchHasAnEmptyGradient) {
  Tensor x = hw::randn({0, 2, 4, 4}).set_requires_grad(true);
  const Tensor y = F::max_pool2d(x, {2});
  EXPECT_EQ(y.sizes(), hw::IntArrayRef({0, 2, 2, 2}));
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), hw::IntArrayRef({0, 2, 4, 4}));
}

TEST(AvgPool2d, MatchesTheReferenceAndItsGradient) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<PoolCase> cases = {
      {2, 3, 8, 8, {2, 2, 2, 2}}, {1, 2, 7, 9, {3, 2, 2, 1}}, {2, 2, 9, 8, {3, 3, 2, 2, 1, 1}}, {2, 1, 6, 5, {3, 3, 1, 1}},
      // ceil_mode: partial last windows, with and without padding, and the dropped window of 5 / 3.
      {2, 2, 7, 9, {2, 2, 2, 2, 0, 0, 1, 1, true}}, {1, 3, 8, 7, {3, 3, 2, 2, 1, 1, 1, 1, true}},
      {2, 1, 5, 5, {3, 3, 3, 3, 1, 1, 1, 1, true}}};
  struct Divisor {
    bool count_include_pad;
    std::int64_t override_value;  // 0: none
  };
  for (const PoolCase& c : cases) {
    for (const Divisor d : {Divisor{true, 0}, Divisor{false, 0}, Divisor{true, 5}}) {
      SCOPED_TRACE(::testing::Message() << "kernel " << c.g.kh << "x" << c.g.kw << " stride " << c.g.sh << ","
                                        << c.g.sw << " pad " << c.g.ph << "," << c.g.pw
                                        << (c.g.ceil_mode ? " ceil_mode" : "") << " count_include_pad "
                                        << d.count_include_pad << " divisor_override " << d.override_value);
      const std::optional<std::int64_t> divisor =
          d.override_value != 0 ? std::optional<std::int64_t>(d.override_value) : std::nullopt;
      const auto pool = [&](const Tensor& v) {
        return F::avg_pool2d(v, {c.g.kh, c.g.kw}, {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, c.g.ceil_mode, d.count_include_pad,
                             divisor);
      };
      for (hw::DType dt : {hw::kFloat64, hw::kFloat32}) {
        const Tensor x = hw::test::random_tensor({c.n, c.c, c.h, c.w}, dt, rng);
        const Tensor y = pool(x);
        ASSERT_EQ(y.sizes(), hw::IntArrayRef({c.n, c.c, c.g.out_h(c.h), c.g.out_w(c.w)}));
        EXPECT_TRUE(hw::test::all_close(
            hw::test::values_of(y),
            hw::test::ref_avg_pool2d(hw::test::values_of(x), c.n * c.c, c.h, c.w, c.g, d.count_include_pad,
                                     d.override_value),
            hw::test::rtol_for(dt), hw::test::atol_for(dt)));
      }
      Tensor x = hw::test::random_tensor({c.n, c.c, c.h, c.w}, hw::kFloat64, rng).set_requires_grad(true);
      const auto r = hw::autograd::gradcheck([&](auto& v) { return pool(v[0]); }, {x});
      EXPECT_TRUE(r.ok) << r.message;
    }
  }
}

// Figures worked by hand from PyTorch's definitions, independent of the reference loops above.
TEST(Pooling, CeilModeSizesAndDivisorsAsPyTorch) {
  // 5 + 2*1 - 3 = 4, / 3 rounded up is 2, + 1 = 3 windows; the third would start at 6 - 1 = 5,
  // in the trailing padding, so PyTorch keeps 2 (and 2 without ceil_mode too).
  EXPECT_EQ(F::max_pool2d(hw::randn({1, 1, 5, 5}), {3}, {3}, {1}, {1}, true).sizes(), hw::IntArrayRef({1, 1, 2, 2}));
  EXPECT_EQ(F::max_pool2d(hw::randn({1, 1, 7, 6}), {2}, {2}, {0}, {1}, true).sizes(), hw::IntArrayRef({1, 1, 4, 3}));
  EXPECT_EQ(hw::nn::MaxPool2d(hw::nn::MaxPool2dOptions(2).ceil_mode(true))->forward(hw::randn({2, 3, 7, 7})).sizes(),
            hw::IntArrayRef({2, 3, 4, 4}));
  // ones 4x4, kernel 3, stride 2, padding 1, ceil_mode: rows (and columns) of windows start at
  // -1, 1, 3. Inside the input they cover 2, 3, 1 rows; inside the padded input (which ends at
  // 5) 3, 3, 2. So the mean with count_include_pad is (2/3, 1, 1/2) x (2/3, 1, 1/2), and without it 1.
  const Tensor ones = hw::ones({1, 1, 4, 4}, {.dtype = hw::kFloat64});
  const std::vector<double> r = {2.0 / 3, 1.0, 0.5};
  std::vector<double> expected;
  for (double a : r) {
    for (double b : r) expected.push_back(a * b);
  }
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(F::avg_pool2d(ones, {3}, {2}, {1}, true)), expected, 1e-15, 0));
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(F::avg_pool2d(ones, {3}, {2}, {1}, true, false)),
                                  std::vector<double>(9, 1.0), 1e-15, 0));
  // divisor_override divides every window's sum by the one number: the corner window sums 4 ones.
  EXPECT_DOUBLE_EQ(hw::test::values_of(F::avg_pool2d(ones, {3}, {2}, {1}, true, true, 8))[0], 0.5);
}

TEST(AdaptiveAvgPool2d, MatchesPyTorchsWindowsAndItsGradient) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  struct Case {
    std::int64_t h, w, oh, ow;
  };
  // Dividing evenly, not dividing (overlapping windows), upsampling, global.
  for (const Case& c : std::vector<Case>{{8, 8, 4, 4}, {7, 10, 3, 4}, {3, 2, 5, 4}, {6, 5, 1, 1}}) {
    SCOPED_TRACE(::testing::Message() << c.h << "x" << c.w << " -> " << c.oh << "x" << c.ow);
    const Tensor x = hw::test::random_tensor({2, 3, c.h, c.w}, hw::kFloat32, rng);
    const Tensor y = F::adaptive_avg_pool2d(x, {c.oh, c.ow});
    ASSERT_EQ(y.sizes(), hw::IntArrayRef({2, 3, c.oh, c.ow}));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y),
                                    hw::test::ref_adaptive_avg_pool2d(hw::test::values_of(x), 6, c.h, c.w, c.oh, c.ow),
                                    1e-5, 1e-6));
    Tensor x64 = hw::test::random_tensor({1, 2, c.h, c.w}, hw::kFloat64, rng).set_requires_grad(true);
    const auto r = hw::autograd::gradcheck([&](auto& v) { return F::adaptive_avg_pool2d(v[0], {c.oh, c.ow}); }, {x64});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

// As PyTorch's, a NaN or an inf reaches only the adaptive windows that cover it (the old
// averaging-matrix product spread it to every window of its plane through 0 * inf).
TEST(AdaptiveAvgPool2d, ANonFiniteValueStaysInItsWindows) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const auto& [oh, ow] : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 4}, {2, 5}}) {
    const Tensor x = hw::test::random_tensor({1, 2, 7, 10}, hw::kFloat32, rng);
    x.data_ptr<float>()[1 * 10 + 2] = std::numeric_limits<float>::quiet_NaN();        // plane 0, (1, 2)
    x.data_ptr<float>()[70 + 5 * 10 + 8] = std::numeric_limits<float>::infinity();  // plane 1, (5, 8)
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(F::adaptive_avg_pool2d(x, {oh, ow})),
                                    hw::test::ref_adaptive_avg_pool2d(hw::test::values_of(x), 2, 7, 10, oh, ow),
                                    1e-5, 1e-6));
  }
}

TEST(PoolModules, ForwardAsFunctionalAndPrint) {
  const Tensor x = hw::randn({2, 3, 8, 6});
  hw::nn::MaxPool2d max_pool(2);
  EXPECT_TRUE(hw::equal(max_pool->forward(x), F::max_pool2d(x, {2})));
  hw::nn::MaxPool2d max_pool_opts(hw::nn::MaxPool2dOptions({3, 2}).stride(1).padding({1, 0}));
  EXPECT_TRUE(hw::equal(max_pool_opts->forward(x), F::max_pool2d(x, {3, 2}, {1}, {1, 0})));
  EXPECT_NE(max_pool->str().find("MaxPool2d(kernel_size=(2, 2), stride=(2, 2)"), std::string::npos) << max_pool->str();
  hw::nn::AvgPool2d avg_pool(hw::nn::AvgPool2dOptions(2).stride(1));
  EXPECT_TRUE(hw::equal(avg_pool->forward(x), F::avg_pool2d(x, {2}, {1})));
  hw::nn::AvgPool2d avg_pool_opts(
      hw::nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false).divisor_override(4));
  EXPECT_TRUE(hw::equal(avg_pool_opts->forward(x), F::avg_pool2d(x, {3}, {2}, {1}, true, false, 4)));
  EXPECT_NE(avg_pool_opts->str().find("ceil_mode=true, count_include_pad=false, divisor_override=4"), std::string::npos)
      << avg_pool_opts->str();
  EXPECT_NE(hw::nn::MaxPool2d(hw::nn::MaxPool2dOptions(2).ceil_mode(true))->str().find("ceil_mode=true"),
            std::string::npos);
  hw::nn::AdaptiveAvgPool2d adaptive(1);
  EXPECT_EQ(hw::nn::AdaptiveAvgPool2d(hw::ExpandingArray<2>({2, 3}))->forward(x).sizes(), hw::IntArrayRef({2, 3, 2, 3}));
  const Tensor pooled = adaptive->forward(x);
  EXPECT_EQ(pooled.sizes(), hw::IntArrayRef({2, 3, 1, 1}));
  EXPECT_TRUE(hw::allclose(pooled, x.mean({2, 3}, true), 1e-5, 1e-6));
  // One image without a batch dimension.
  EXPECT_EQ(max_pool->forward(x.select(0, 0)).sizes(), hw::IntArrayRef({3, 4, 3}));
}

TEST(Pooling, BadArgumentsAreClearErrors) {
  const Tensor x = hw::randn({1, 2, 4, 4});
  using hw::Error;
  using hw::test::throws_with;
  EXPECT_TRUE(throws_with<Error>([&] { F::max_pool2d(x, {3}, {1}, {2}); }, "at most half of the kernel size"));
  EXPECT_TRUE(throws_with<Error>([&] { F::max_pool2d(x, {5}); }, "smaller than the dilated kernel"));
  EXPECT_TRUE(throws_with<Error>([&] { F::max_pool2d(x, {2, 2, 2}); }, "kernel_size must be one value or two"));
  EXPECT_TRUE(throws_with<Error>([&] { F::max_pool2d(x, {0}); }, "kernel_size must be at least 1"));
  EXPECT_TRUE(throws_with<Error>([&] { F::max_pool2d(hw::randn({4, 4}), {2}); }, "[N, C, H, W]"));
  EXPECT_TRUE(throws_with<Error>([&] { F::max_pool2d(hw::ones({1, 1, 4, 4}, {.dtype = hw::kInt64}), {2}); },
                                 "floating point"));
  EXPECT_TRUE(throws_with<Error>([&] { F::avg_pool2d(x, {2}, {2}, {2}); }, "at most half of the kernel size"));
  EXPECT_TRUE(throws_with<Error>([&] { F::avg_pool2d(x, {2}, {2}, {0}, false, true, 0); }, "divisor_override"));
  EXPECT_TRUE(throws_with<Error>([&] { F::avg_pool2d(x, {5}, {1}, {0}, true); }, "smaller than the"));
  EXPECT_TRUE(throws_with<Error>([&] { F::adaptive_avg_pool2d(x, {0}); }, "must be positive"));
  // An integer input is named as such by the op itself (avg_pool2d's error came from im2col).
  EXPECT_TRUE(throws_with<Error>([&] { F::avg_pool2d(hw::ones({1, 1, 4, 4}, {.dtype = hw::kInt64}), {2}); },
                                 "avg_pool2d: expected a floating point input, got int64"));
}

}  // namespace
