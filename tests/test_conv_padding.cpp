// Conv2d's padding options as torch.nn.Conv2d's: padding Same (odd and even kernels, dilation:
// the output keeps the input's height and width) and Valid, and each padding_mode, against a
// float64 reference (support/pad_reference.h's padding, then window_reference.h's convolution
// without padding), against functional::pad followed by conv2d without padding, and against
// padded grids written out by hand; gradients through a reflect-padded Conv2d; the stride error
// and the printout.
#include <string>
#include <variant>
#include <vector>

#include "support/pad_reference.h"
#include "support/test_support.h"
#include "support/window_reference.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;
using nn::Conv2d;
using nn::Conv2dOptions;
using nn::Padding;
using nn::PaddingMode;

F::PadMode pad_mode_of(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::Zeros: return F::PadMode::Constant;
    case PaddingMode::Reflect: return F::PadMode::Reflect;
    case PaddingMode::Replicate: return F::PadMode::Replicate;
    case PaddingMode::Circular: return F::PadMode::Circular;
  }
  return F::PadMode::Constant;
}

constexpr PaddingMode kModes[] = {PaddingMode::Zeros, PaddingMode::Reflect, PaddingMode::Replicate,
                                  PaddingMode::Circular};

struct SameCase {
  std::int64_t kh, kw, dh = 1, dw = 1;
};

// conv->forward(x) against the reference: x padded by `pad` (left, right, top, bottom) in `mode`,
// then convolved without padding at `stride`.
void expect_reference(Conv2d& conv, const Tensor& x, const std::vector<std::int64_t>& pad, PaddingMode mode,
                      std::int64_t stride = 1) {
  const Tensor y = conv->forward(x);
  const std::vector<std::int64_t> sizes = x.sizes().vec();
  const PaddedValues padded = ref_pad(values_of(x), sizes, pad, pad_mode_of(mode));
  const Conv2dOptions& o = conv->options;
  const Window g{o.kernel_size()[0], o.kernel_size()[1], stride, stride, 0, 0, o.dilation()[0], o.dilation()[1]};
  const std::int64_t h = padded.sizes[2], w = padded.sizes[3];
  const std::vector<double> expected = ref_conv2d(padded.values, sizes[0], sizes[1], h, w, values_of(conv->weight),
                                                  o.out_channels(), values_of(conv->bias), g, 1);
  ASSERT_EQ(y.sizes(), IntArrayRef({sizes[0], o.out_channels(), g.out_h(h), g.out_w(w)}));
  EXPECT_TRUE(all_close(values_of(y), expected, 1e-12, 1e-12));
  // The same as padding with functional::pad and convolving without padding.
  const Tensor composed = F::conv2d(F::pad(x, pad, pad_mode_of(mode)), conv->weight, conv->bias, {stride}, {0},
                                    o.dilation());
  EXPECT_TRUE(all_close(values_of(y), values_of(composed), 0, 0));
  // functional::conv2d takes Same and Valid itself, as torch.nn.functional.conv2d's padding strings.
  if (const auto* kind = std::get_if<Padding>(&o.padding()); kind != nullptr && mode == PaddingMode::Zeros) {
    const Tensor direct = F::conv2d(x, conv->weight, conv->bias, {stride}, *kind, o.dilation());
    EXPECT_TRUE(all_close(values_of(direct), expected, 1e-12, 1e-12));
    // One image [C, H, W], as PyTorch's unbatched input, with one dilation value for both axes
    // where the two are equal (an even kernel's uneven split included).
    const std::vector<std::int64_t> dilation = o.dilation()[0] == o.dilation()[1]
                                                   ? std::vector<std::int64_t>{o.dilation()[0]}
                                                   : std::vector<std::int64_t>{o.dilation()[0], o.dilation()[1]};
    const Tensor image = F::conv2d(x.select(0, 1), conv->weight, conv->bias, {stride}, *kind, dilation);
    EXPECT_TRUE(all_close(values_of(image), values_of(y.select(0, 1)), 1e-12, 1e-12));
  }
}

TEST(Conv2dPadding, SameKeepsTheSizeWithEveryModeAsPyTorch) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<SameCase> cases = {
      {3, 3}, {5, 3},          // odd kernels: the same padding on both sides
      {2, 2}, {4, 3},          // even kernels: the odd row or column of padding goes after
      {3, 3, 2, 2}, {2, 3, 2, 1},  // dilation: dilation * (kernel - 1) in all
  };
  for (const SameCase& c : cases) {
    for (PaddingMode mode : kModes) {
      SCOPED_TRACE(::testing::Message() << "kernel " << c.kh << "x" << c.kw << ", dilation " << c.dh << "," << c.dw
                                        << ", mode " << static_cast<int>(mode));
      Conv2d conv(Conv2dOptions(3, 4, {c.kh, c.kw}).padding(Padding::Same).dilation({c.dh, c.dw}).padding_mode(mode));
      conv->to(kFloat64);
      const Tensor x = random_tensor({2, 3, 7, 6}, kFloat64, rng);
      const std::int64_t th = c.dh * (c.kh - 1), tw = c.dw * (c.kw - 1);
      expect_reference(conv, x, {tw / 2, tw - tw / 2, th / 2, th - th / 2}, mode);
      EXPECT_EQ(conv->forward(x).sizes(), IntArrayRef({2, 4, 7, 6}));
    }
  }
}

TEST(Conv2dPadding, ValidAndExplicitSizesWithEveryMode) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (PaddingMode mode : kModes) {
    SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode));
    const Tensor x = random_tensor({2, 3, 8, 7}, kFloat64, rng);
    Conv2d valid(Conv2dOptions(3, 4, {3, 2}).padding(Padding::Valid).stride(2).padding_mode(mode));
    valid->to(kFloat64);
    expect_reference(valid, x, {0, 0, 0, 0}, mode, 2);
    Conv2d sized(Conv2dOptions(3, 2, 3).padding({1, 2}).stride(2).padding_mode(mode));
    sized->to(kFloat64);
    expect_reference(sized, x, {2, 2, 1, 1}, mode, 2);
  }
}

// x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]] padded by 1 in each mode, written out; a 3x3 kernel with
// 1 at its top left and 100 at its bottom right makes y[i][j] = P[i][j] + 100 * P[i + 2][j + 2].
TEST(Conv2dPadding, MatchesPaddedGridsWrittenByHand) {
  const std::vector<std::pair<PaddingMode, std::vector<double>>> grids = {
      {PaddingMode::Zeros, {0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 7, 8, 9, 0, 0, 0, 0, 0, 0}},
      {PaddingMode::Reflect, {5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5, 8, 7, 8, 9, 8, 5, 4, 5, 6, 5}},
      {PaddingMode::Replicate, {1, 1, 2, 3, 3, 1, 1, 2, 3, 3, 4, 4, 5, 6, 6, 7, 7, 8, 9, 9, 7, 7, 8, 9, 9}},
      {PaddingMode::Circular, {9, 7, 8, 9, 7, 3, 1, 2, 3, 1, 6, 4, 5, 6, 4, 9, 7, 8, 9, 7, 3, 1, 2, 3, 1}},
  };
  const Tensor x = arange(1, 10, 1, {.dtype = kFloat64}).reshape({1, 1, 3, 3});
  for (const auto& [mode, grid] : grids) {
    SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode));
    Conv2d conv(Conv2dOptions(1, 1, 3).padding(1).bias(false).padding_mode(mode));
    conv->to(kFloat64);
    {
      NoGradGuard no_grad;
      conv->weight.copy_(tensor(std::vector<double>{1, 0, 0, 0, 0, 0, 0, 0, 100}, {1, 1, 3, 3}, {.dtype = kFloat64}));
    }
    std::vector<double> expected;
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 3; ++j) expected.push_back(grid[i * 5 + j] + 100 * grid[(i + 2) * 5 + j + 2]);
    }
    EXPECT_TRUE(all_close(values_of(conv->forward(x)), expected, 0, 0));
  }
}

TEST(Conv2dPadding, GradientsThroughReflectAndCircularPadding) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (PaddingMode mode : {PaddingMode::Reflect, PaddingMode::Circular}) {
    SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode));
    Conv2d conv(Conv2dOptions(2, 3, {2, 3}).padding(Padding::Same).dilation({2, 1}).padding_mode(mode));
    conv->to(kFloat64);
    Tensor x = random_tensor({2, 2, 5, 4}, kFloat64, rng);
    x.set_requires_grad(true);
    const auto r = autograd::gradcheck([&](const std::vector<Tensor>& v) { return conv->forward(v[0]); }, {x});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(Conv2dPadding, SameRefusesStridesAsPyTorch) {
  EXPECT_TRUE(throws_with<Error>([] { Conv2d(Conv2dOptions(3, 4, 3).padding(Padding::Same).stride({1, 2})); },
                                 "padding Same is not supported for strided convolutions (stride (1, 2))"));
  EXPECT_NO_THROW(Conv2d(Conv2dOptions(3, 4, 3).padding(Padding::Valid).stride(2)));
  const Tensor x = randn({1, 3, 5, 5}), w = randn({4, 3, 3, 3});
  EXPECT_TRUE(throws_with<Error>([&] { F::conv2d(x, w, {}, {2}, Padding::Same); },
                                 "padding Same is not supported for strided convolutions"));
  EXPECT_EQ(F::conv2d(x, w, {}, {2}, Padding::Valid).sizes(), IntArrayRef({1, 4, 2, 2}));
}

TEST(Conv2dPadding, PrintsTheOptionsAsPyTorch) {
  const auto text = [](const Conv2dOptions& options) { return Conv2d(options)->str(); };
  EXPECT_EQ(text(Conv2dOptions(3, 4, 3).padding(Padding::Same).padding_mode(PaddingMode::Reflect)),
            "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, padding_mode=reflect)");
  EXPECT_EQ(text(Conv2dOptions(3, 4, 3).padding(Padding::Valid).padding_mode(PaddingMode::Circular)),
            "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=valid, padding_mode=circular)");
  EXPECT_EQ(text(Conv2dOptions(3, 4, 3).padding({1, 2}).padding_mode(PaddingMode::Replicate)),
            "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 2), padding_mode=replicate)");
  EXPECT_EQ(text(Conv2dOptions(3, 4, 3).padding(1)), "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
}

}  // namespace
}  // namespace hwaro::test
