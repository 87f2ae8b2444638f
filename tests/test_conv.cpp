// conv2d, im2col and col2im against float64 loops on fresh random inputs over strides, paddings,
// dilations, groups, non-square kernels and inputs, batch 1, single images and non-contiguous
// inputs; gradients by finite differences (the float32 direct convolution's against differences
// of the float64 reference); the shared col2im gather (the CUDA path) against the
// CPU's scatter; Conv2d's options, initialisation and errors.
#include <cmath>

#include "kernels/window2d.h"
#include "ops/convolution.h"
#include "support/test_support.h"
#include "support/window_reference.h"

namespace hw = hwaro;
namespace F = hw::nn::functional;
using hw::Tensor;
using hw::test::Window;

namespace {

struct ConvCase {
  std::int64_t n, c, h, w, o;
  Window g;
  std::int64_t groups = 1;
  bool bias = true;
};

std::vector<ConvCase> conv_cases() {
  return {
      {2, 3, 7, 7, 4, {3, 3}},                               // plain 3x3
      {1, 1, 28, 28, 8, {3, 3, 1, 1, 1, 1}},                 // batch 1, padding 1 (the CNN's first layer)
      {3, 4, 9, 6, 6, {3, 2, 2, 1, 1, 0}},                   // non-square kernel, input and strides
      {2, 2, 10, 11, 3, {3, 3, 1, 2, 2, 1, 2, 2}},           // dilation 2 with padding
      {2, 4, 8, 8, 6, {3, 3, 1, 1, 1, 1}, 2},                // groups 2
      {1, 6, 5, 7, 6, {1, 3, 1, 2, 0, 1}, 6, false},         // depthwise, no bias
      {4, 3, 6, 6, 5, {1, 1}},                               // 1x1
      {2, 3, 5, 5, 2, {5, 5}},                               // kernel as large as the input
      {2, 2, 4, 4, 2, {2, 2, 3, 3, 1, 1}},                   // stride larger than the kernel
  };
}

void check_conv(const ConvCase& c, hw::DType dt, bool strided, std::mt19937_64& rng) {
  SCOPED_TRACE(::testing::Message() << "x [" << c.n << "," << c.c << "," << c.h << "," << c.w << "], out " << c.o
                                    << ", kernel " << c.g.kh << "x" << c.g.kw << ", stride " << c.g.sh << "," << c.g.sw
                                    << ", pad " << c.g.ph << "," << c.g.pw << ", dil " << c.g.dh << "," << c.g.dw
                                    << ", groups " << c.groups << ", dtype " << dt << (strided ? ", strided" : ""));
  Tensor x = hw::test::random_tensor({c.n, c.c, c.h, c.w}, dt, rng);
  Tensor w = hw::test::random_tensor({c.o, c.c / c.groups, c.g.kh, c.g.kw}, dt, rng);
  Tensor b = c.bias ? hw::test::random_tensor({c.o}, dt, rng) : Tensor();
  if (strided) x = hw::test::non_contiguous_copy(x);
  const Tensor y = F::conv2d(x, w, b, {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.groups);
  ASSERT_EQ(y.sizes(), hw::IntArrayRef({c.n, c.o, c.g.out_h(c.h), c.g.out_w(c.w)}));
  ASSERT_TRUE(y.is_contiguous());
  const auto expected = hw::test::ref_conv2d(hw::test::values_of(x), c.n, c.c, c.h, c.w, hw::test::values_of(w), c.o,
                                             c.bias ? hw::test::values_of(b) : std::vector<double>{}, c.g, c.groups);
  // A sum of C*kh*kw products: float32 rounds a few ulps per term.
  const double scale = dt == hw::kFloat64 ? 1.0 : std::sqrt(static_cast<double>(c.c / c.groups * c.g.kh * c.g.kw));
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, hw::test::rtol_for(dt) * scale,
                                  hw::test::atol_for(dt) * scale * 4));
}

TEST(Conv2d, MatchesFloat64Reference) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const ConvCase& c : conv_cases()) {
    for (hw::DType dt : {hw::kFloat64, hw::kFloat32}) check_conv(c, dt, false, rng);
    check_conv(c, hw::kFloat32, true, rng);
  }
}

// An empty batch gives an empty output, and zero gradients for the weight and bias (sums over no
// images), in float32 (oneDNN's path where built) and float64 (im2col's), as in PyTorch.
TEST(Conv2d, AnEmptyBatchGivesAnEmptyOutputAndZeroGradients) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  for (const hw::DType dtype : {hw::kFloat32, hw::kFloat64}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    const Tensor x = hw::zeros({0, 3, 6, 5}, {.dtype = dtype}).set_requires_grad(true);
    const Tensor w = hw::test::random_tensor({4, 3, 3, 3}, dtype, rng).set_requires_grad(true);
    const Tensor b = hw::test::random_tensor({4}, dtype, rng).set_requires_grad(true);
    const Tensor y = F::conv2d(x, w, b, {1}, {1});
    ASSERT_EQ(y.sizes(), hw::IntArrayRef({0, 4, 6, 5}));
    y.sum().backward();
    EXPECT_EQ(x.grad().sizes(), x.sizes());
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(w.grad()), std::vector<double>(4 * 3 * 3 * 3, 0.0), 0, 0));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(b.grad()), std::vector<double>(4, 0.0), 0, 0));
  }
}

TEST(Conv2d, BFloat16RoundsFromTheFloat32Result) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  check_conv({2, 3, 6, 6, 4, {3, 3, 1, 1, 1, 1}}, hw::kBFloat16, false, rng);
}

TEST(Conv2d, SingleImageWithoutBatchDim) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  const Tensor x = hw::test::random_tensor({3, 6, 5}, hw::kFloat64, rng);
  const Tensor w = hw::test::random_tensor({2, 3, 3, 3}, hw::kFloat64, rng);
  const Tensor y = F::conv2d(x, w, {}, {1}, {1});
  ASSERT_EQ(y.sizes(), hw::IntArrayRef({2, 6, 5}));
  const auto expected = hw::test::ref_conv2d(hw::test::values_of(x), 1, 3, 6, 5, hw::test::values_of(w), 2, {},
                                             {3, 3, 1, 1, 1, 1}, 1);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, 1e-12, 1e-12));
}

TEST(Conv2d, GradientsMatchFiniteDifferences) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<ConvCase> cases = {
      {2, 2, 5, 5, 3, {3, 3, 1, 1, 1, 1}},
      {1, 3, 6, 5, 2, {2, 3, 2, 1, 1, 1}},
      {2, 2, 7, 6, 2, {3, 2, 1, 2, 2, 1, 2, 2}},
      {2, 4, 5, 5, 4, {3, 3, 2, 2, 1, 1}, 2},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "case with kernel " << c.g.kh << "x" << c.g.kw << ", groups " << c.groups);
    std::vector<Tensor> inputs = {hw::test::random_tensor({c.n, c.c, c.h, c.w}, hw::kFloat64, rng),
                                  hw::test::random_tensor({c.o, c.c / c.groups, c.g.kh, c.g.kw}, hw::kFloat64, rng),
                                  hw::test::random_tensor({c.o}, hw::kFloat64, rng)};
    for (Tensor& t : inputs) t.set_requires_grad(true);
    const auto r = hw::autograd::gradcheck(
        [&](const std::vector<Tensor>& v) {
          return F::conv2d(v[0], v[1], v[2], {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.groups);
        },
        inputs);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

// float32 on the CPU takes the direct convolution (oneDNN, where the build found it), float64 the
// im2col path whose gradients gradcheck verifies above: both directions' gradients must agree,
// over the whole case list, for uneven slices of the batch (n = 3, 1) and with one and two threads.
TEST(Conv2d, Float32GradientsMatchTheFloat64Ones) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int threads = hw::get_num_threads();
  for (int t : {1, 2}) {
    hw::set_num_threads(t);
    for (const ConvCase& c : conv_cases()) {
      SCOPED_TRACE(::testing::Message() << t << " threads, x [" << c.n << "," << c.c << "," << c.h << "," << c.w
                                        << "], kernel " << c.g.kh << "x" << c.g.kw << ", groups " << c.groups);
      const Tensor x64 = hw::test::random_tensor({c.n, c.c, c.h, c.w}, hw::kFloat64, rng);
      const Tensor w64 = hw::test::random_tensor({c.o, c.c / c.groups, c.g.kh, c.g.kw}, hw::kFloat64, rng);
      const Tensor b64 = c.bias ? hw::test::random_tensor({c.o}, hw::kFloat64, rng) : Tensor();
      const Tensor probe = hw::test::random_tensor(
          {c.n, c.o, c.g.out_h(c.h), c.g.out_w(c.w)}, hw::kFloat64, rng);  // the loss is sum(probe * y)
      std::vector<std::vector<double>> grads[2];
      for (hw::DType dt : {hw::kFloat64, hw::kFloat32}) {
        Tensor x = x64.to(dt).detach(), w = w64.to(dt).detach(), b = c.bias ? b64.to(dt).detach() : Tensor();
        for (Tensor* v : {&x, &w, &b}) {
          if (v->defined()) v->set_requires_grad(true);
        }
        const Tensor y = F::conv2d(x, w, b, {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.groups);
        (y * probe.to(dt)).sum().backward();
        auto& out = grads[dt == hw::kFloat32 ? 1 : 0];
        for (const Tensor* v : {&x, &w, &b}) {
          if (v->defined()) out.push_back(hw::test::values_of(v->grad()));
        }
      }
      ASSERT_EQ(grads[0].size(), grads[1].size());
      const double scale = std::sqrt(static_cast<double>(c.o * c.g.kh * c.g.kw + c.n * c.g.out_h(c.h) * c.g.out_w(c.w)));
      for (std::size_t i = 0; i < grads[0].size(); ++i) {
        EXPECT_TRUE(hw::test::all_close(grads[1][i], grads[0][i], 1e-5 * scale, 1e-5 * scale))
            << "gradient " << i << " (input, weight, bias)";
      }
    }
  }
  hw::set_num_threads(threads);
}

// The direct convolution's backward (GradOp::Conv2d: the backend's Conv2dBackwardInput and
// Conv2dBackwardWeight kernels) by finite differences. gradcheck needs float64, which takes the
// im2col path, and the direct path is float32 only; so the float32 vector-Jacobian product
// (backward from a random grad_output g) is compared with float64 central differences of
// <g, ref_conv2d(x, w, b)> over the same values. That loss is linear in each value, so the
// differences are exact but for rounding, and the tolerance is float32's alone.
TEST(Conv2d, DirectFloat32BackwardMatchesFiniteDifferencesOfTheReference) {
  if (!hw::ops::has_direct_conv2d(hw::zeros({1, 1, 1, 1})))
    GTEST_SKIP() << "this build has no direct float32 convolution on the CPU (oneDNN not found)";
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<ConvCase> cases = {
      {2, 4, 7, 6, 6, {3, 2, 2, 1, 1, 0, 1, 2}, 2},         // stride, padding, dilation, groups 2, bias
      {1, 3, 6, 5, 4, {2, 3, 1, 1, 2, 1, 2, 1}, 1, false},  // padding 2,1, dilation 2,1, no bias
      {2, 3, 5, 5, 3, {3, 3, 2, 2, 1, 1}, 3},               // depthwise, stride 2
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "x [" << c.n << "," << c.c << "," << c.h << "," << c.w << "], kernel " << c.g.kh
                                      << "x" << c.g.kw << ", groups " << c.groups << (c.bias ? ", bias" : ""));
    const std::int64_t oh = c.g.out_h(c.h), ow = c.g.out_w(c.w);
    Tensor x = hw::test::random_tensor({c.n, c.c, c.h, c.w}, hw::kFloat32, rng, -1, 1).set_requires_grad(true);
    Tensor w = hw::test::random_tensor({c.o, c.c / c.groups, c.g.kh, c.g.kw}, hw::kFloat32, rng, -1, 1)
                   .set_requires_grad(true);
    Tensor b = c.bias ? hw::test::random_tensor({c.o}, hw::kFloat32, rng, -1, 1).set_requires_grad(true) : Tensor();
    const Tensor g = hw::test::random_tensor({c.n, c.o, oh, ow}, hw::kFloat32, rng, -1, 1);
    ASSERT_TRUE(hw::ops::has_direct_conv2d(x));
    const Tensor y = F::conv2d(x, w, b, {c.g.sh, c.g.sw}, {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.groups);
    ASSERT_NE(y.grad_fn(), nullptr);
    ASSERT_EQ(y.grad_fn()->name(), "Conv2dBackward");  // one direct node, not im2col and a GEMM
    y.backward(g);

    // The float64 values the float32 tensors hold exactly; central differences of the loss in each.
    std::vector<std::vector<double>> values = {hw::test::values_of(x), hw::test::values_of(w)};
    if (c.bias) values.push_back(hw::test::values_of(b));
    const std::vector<double> gv = hw::test::values_of(g);
    const auto loss = [&] {
      const std::vector<double> out = hw::test::ref_conv2d(values[0], c.n, c.c, c.h, c.w, values[1], c.o,
                                                           c.bias ? values[2] : std::vector<double>{}, c.g, c.groups);
      double sum = 0;
      for (std::size_t k = 0; k < out.size(); ++k) sum += gv[k] * out[k];
      return sum;
    };
    const double step = 1e-3;
    const Tensor grads[] = {x.grad(), w.grad(), b.defined() ? b.grad() : Tensor()};
    // Each gradient element sums at most o/groups*kh*kw (input) or n*oh*ow (weight, bias) float32
    // products of values in [-1, 1].
    const double scale = std::sqrt(static_cast<double>(c.o / c.groups * c.g.kh * c.g.kw + c.n * oh * ow));
    for (std::size_t v = 0; v < values.size(); ++v) {
      std::vector<double> expected(values[v].size());
      for (std::size_t i = 0; i < values[v].size(); ++i) {
        const double keep = values[v][i];
        values[v][i] = keep + step;
        const double up = loss();
        values[v][i] = keep - step;
        const double down = loss();
        values[v][i] = keep;
        expected[i] = (up - down) / (2 * step);
      }
      ASSERT_TRUE(grads[v].defined()) << "gradient " << v << " (input, weight, bias)";
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(grads[v]), expected, 1e-5 * scale, 1e-5 * scale))
          << "gradient " << v << " (input, weight, bias)";
    }
  }
}

// col2im is im2col's adjoint: <im2col(x), y> == <x, col2im(y)> for any x and y.
TEST(Im2col, Col2imIsItsAdjoint) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  const Tensor x = hw::test::random_tensor({2, 3, 7, 6}, hw::kFloat64, rng);
  const Tensor cols = hw::im2col(x, {3, 2}, {2, 1}, {1, 1}, {1, 2});
  const Tensor y = hw::test::random_tensor(cols.sizes(), hw::kFloat64, rng);
  const Tensor back = hw::col2im(y, {7, 6}, {3, 2}, {2, 1}, {1, 1}, {1, 2});
  ASSERT_EQ(back.sizes(), x.sizes());
  EXPECT_NEAR((cols * y).sum().item<double>(), (x * back).sum().item<double>(), 1e-10);
}

TEST(Im2col, MatchesTheWindowDefinition) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  const Window g{2, 3, 2, 1, 1, 2, 1, 2};
  const std::int64_t n = 2, c = 3, h = 5, w = 6;
  const Tensor x = hw::test::random_tensor({n, c, h, w}, hw::kFloat32, rng);
  const Tensor cols = hw::im2col(x, {g.kh, g.kw}, {g.dh, g.dw}, {g.ph, g.pw}, {g.sh, g.sw});
  const std::int64_t oh = g.out_h(h), ow = g.out_w(w);
  ASSERT_EQ(cols.sizes(), hw::IntArrayRef({n, c * g.kh * g.kw, oh * ow}));
  const auto xv = hw::test::values_of(x);
  std::vector<double> expected;
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t ki = 0; ki < g.kh; ++ki)
        for (std::int64_t kj = 0; kj < g.kw; ++kj)
          for (std::int64_t i = 0; i < oh; ++i)
            for (std::int64_t j = 0; j < ow; ++j) {
              const std::int64_t r = i * g.sh - g.ph + ki * g.dh, col = j * g.sw - g.pw + kj * g.dw;
              expected.push_back(r < 0 || r >= h || col < 0 || col >= w ? 0.0 : xv[((b * c + ch) * h + r) * w + col]);
            }
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(cols), expected, 0, 0));
}

// The CUDA kernel sums with kernels::col2im_element (a gather); the CPU kernel scatters. Both
// must agree, and this runs the gather here where there is no GPU.
TEST(Im2col, SharedGatherMatchesTheCpuScatter) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  const hw::kernels::Window2d g{3, 2, 2, 1, 1, 1, 1, 2};
  const std::int64_t c = 2, h = 7, w = 6, oh = g.out_height(h), ow = g.out_width(w);
  const Tensor cols = hw::test::random_tensor({1, c * g.kh * g.kw, oh * ow}, hw::kFloat64, rng);
  const Tensor x = hw::col2im(cols, {h, w}, {g.kh, g.kw}, {g.dh, g.dw}, {g.ph, g.pw}, {g.sh, g.sw});
  const auto cv = hw::test::values_of(cols);
  std::vector<double> gathered;
  for (std::int64_t ch = 0; ch < c; ++ch) {
    const auto at = [&](std::int64_t tap, std::int64_t l) { return cv[((ch * g.kh * g.kw + tap) * oh * ow) + l]; };
    for (std::int64_t r = 0; r < h; ++r)
      for (std::int64_t col = 0; col < w; ++col) gathered.push_back(hw::kernels::col2im_element<double>(at, r, col, oh, ow, g));
  }
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(x), gathered, 1e-12, 1e-12));
}

TEST(Im2col, GradientsOfBothDirections) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  Tensor x = hw::test::random_tensor({1, 2, 5, 4}, hw::kFloat64, rng).set_requires_grad(true);
  auto r = hw::autograd::gradcheck([](auto& v) { return hw::im2col(v[0], {2, 3}, {1}, {1, 0}, {2, 1}); }, {x});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor cols = hw::test::random_tensor({1, 2 * 6, 3 * 2}, hw::kFloat64, rng).set_requires_grad(true);
  r = hw::autograd::gradcheck([](auto& v) { return hw::col2im(v[0], {5, 4}, {2, 3}, {1}, {1, 0}, {2, 1}); }, {cols});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(Conv2d, BadShapesNameTheArgument) {
  const Tensor x = hw::randn({2, 1, 8, 8});
  using hw::Error;
  using hw::test::throws_with;
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 3, 3, 3})); },
                                 "conv2d: weight has 3 input channels but input has 1"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(hw::randn({8, 8}), hw::randn({4, 1, 3, 3})); }, "[N, C, H, W]"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3})); }, "weight of 4 dimensions"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3, 3}), hw::randn({3})); }, "bias of shape [4]"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 9, 9})); }, "smaller than the dilated kernel"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3, 3}), {}, {0}); }, "stride must be at least 1"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3, 3}), {}, {1}, {-1}); }, "padding"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({3, 1, 3, 3}), {}, {1}, {0}, {1}, 2); },
                                 "divisible by groups"));
  // As PyTorch's: one value for both dims or one per dim; a third is not silently dropped.
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3, 3}), {}, {1, 2, 3}); },
                                 "expected stride to be a single integer value or a list of 2 values"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3, 3}), {}, {1}, hw::nn::Padding::Same, {1, 1, 1}); },
                                 "expected dilation to be a single integer value or a list of 2 values"));
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, hw::randn({4, 1, 3, 3}, {.dtype = hw::kFloat64})); }, "dtype"));
  EXPECT_TRUE(throws_with<Error>([&] { hw::col2im(hw::randn({1, 9, 5}), {4, 4}, {3, 3}); }, "window positions"));
  EXPECT_TRUE(throws_with<hw::DeviceMismatchError>(
      [&] { F::conv2d(x, hw::randn({4, 1, 3, 3}).to(hw::test::other_device())); }, "same device"));
}

TEST(Conv2dModule, OptionsShapesAndPyTorchInitialisation) {
  hw::nn::Conv2d conv(hw::nn::Conv2dOptions(4, 6, {3, 5}).padding(1).stride(2).groups(2));
  EXPECT_EQ(conv->weight.sizes(), hw::IntArrayRef({6, 2, 3, 5}));
  EXPECT_EQ(conv->bias.sizes(), hw::IntArrayRef({6}));
  // kaiming_uniform(a = sqrt(5)) and the bias both give bounds 1/sqrt(fan_in), fan_in = 2*3*5.
  const double bound = 1.0 / std::sqrt(30.0);
  EXPECT_LE(conv->weight.abs().max().item<float>(), bound);
  EXPECT_LE(conv->bias.abs().max().item<float>(), bound);
  // Spread over the range, not a constant: the largest of 180 uniform draws is near the bound.
  EXPECT_GT(conv->weight.abs().max().item<float>(), 0.8 * bound);
  EXPECT_EQ(conv->parameters().size(), 2u);
  EXPECT_NE(conv->str().find("Conv2d(4, 6, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), groups=2)"),
            std::string::npos)
      << conv->str();

  const Tensor x = hw::randn({2, 4, 9, 9});
  const Tensor expected = F::conv2d(x, conv->weight, conv->bias, {2}, {1}, {1}, 2);
  EXPECT_TRUE(hw::allclose(conv->forward(x), expected, 0, 0));

  hw::nn::Conv2d plain(1, 32, 3);
  EXPECT_EQ(plain->weight.sizes(), hw::IntArrayRef({32, 1, 3, 3}));
  hw::nn::Conv2d no_bias(hw::nn::Conv2dOptions(1, 2, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->parameters().size(), 1u);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::nn::Conv2d(hw::nn::Conv2dOptions(3, 4, 3).groups(2)); },
                                               "divisible by groups"));
}

TEST(Conv2dModule, TrainsThroughBackward) {
  hw::nn::Conv2d conv(hw::nn::Conv2dOptions(2, 3, 3).padding(1));
  const Tensor x = hw::randn({2, 2, 5, 5});
  conv->forward(x).pow(2.0).sum().backward();
  ASSERT_TRUE(conv->weight.grad().defined());
  ASSERT_TRUE(conv->bias.grad().defined());
  EXPECT_EQ(conv->weight.grad().sizes(), conv->weight.sizes());
  EXPECT_GT(conv->weight.grad().abs().sum().item<float>(), 0.0f);
}

}  // namespace
