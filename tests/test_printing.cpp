// Tensor::str() and operator<<: PyTorch's text for values, then shape, dtype and device.
#include <sstream>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

std::string suffix(const std::string& shape, const std::string& dtype, const std::string& device = "cpu") {
  return ", shape=" + shape + ", dtype=" + dtype + ", device=" + device + ")";
}

}  // namespace

TEST(Printing, TwoDimensionalFloatsAlignInColumns) {
  const hw::Tensor t = hw::tensor({{0.1234f, -1.5f}, {2.f, 3.f}});
  EXPECT_EQ(t.str(), "tensor([[ 0.1234, -1.5000],\n        [ 2.0000,  3.0000]]" + suffix("[2, 2]", "float32"));
}

TEST(Printing, IntegralFloatsGetATrailingDot) {
  EXPECT_EQ(hw::tensor({1.f, 2.f, 3.f}).str(), "tensor([1., 2., 3.]" + suffix("[3]", "float32"));
  EXPECT_EQ(hw::zeros({2}).str(), "tensor([0., 0.]" + suffix("[2]", "float32"));
  EXPECT_EQ(hw::tensor({-10.0, 5.0}).str(), "tensor([-10.,   5.]" + suffix("[2]", "float64"));
}

TEST(Printing, IntegersAndBools) {
  EXPECT_EQ(hw::tensor<std::int64_t>({1, 2, 3}).str(), "tensor([1, 2, 3]" + suffix("[3]", "int64"));
  EXPECT_EQ(hw::tensor<std::int32_t>({-5, 10}).str(), "tensor([-5, 10]" + suffix("[2]", "int32"));
  EXPECT_EQ(hw::tensor<std::uint8_t>({7, 255}).str(), "tensor([  7, 255]" + suffix("[2]", "uint8"));
  EXPECT_EQ(hw::tensor({true, false}).str(), "tensor([ True, False]" + suffix("[2]", "bool"));
}

TEST(Printing, ScientificWhenTheRangeNeedsIt) {
  EXPECT_EQ(hw::tensor({1e-5f, 1.f}).str(), "tensor([1.0000e-05, 1.0000e+00]" + suffix("[2]", "float32"));
  EXPECT_EQ(hw::tensor({-1e-5, 123.0}).str(), "tensor([-1.0000e-05,  1.2300e+02]" + suffix("[2]", "float64"));
  // Integral values too, when they span more than three orders of magnitude.
  EXPECT_EQ(hw::tensor({1.f, 1e9f}).str(), "tensor([1.0000e+00, 1.0000e+09]" + suffix("[2]", "float32"));
}

TEST(Printing, NonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(hw::tensor({nan, 1.f, inf, -inf}).str(), "tensor([nan, 1., inf, -inf]" + suffix("[4]", "float32"));
  EXPECT_EQ(hw::tensor({-nan, 0.5f}).str(), "tensor([   nan, 0.5000]" + suffix("[2]", "float32"));
}

TEST(Printing, SixteenBitFloats) {
  EXPECT_EQ(hw::tensor({1.5f, 2.25f}).to(hw::kFloat16).str(), "tensor([1.5000, 2.2500]" + suffix("[2]", "float16"));
  EXPECT_EQ(hw::tensor({1.f, -2.f}).to(hw::kBFloat16).str(), "tensor([ 1., -2.]" + suffix("[2]", "bfloat16"));
}

TEST(Printing, ZeroDimensional) {
  EXPECT_EQ(hw::scalar_tensor(3.5).str(), "tensor(3.5000" + suffix("[]", "float32"));
  EXPECT_EQ(hw::scalar_tensor(std::int64_t{-7}).str(), "tensor(-7" + suffix("[]", "int64"));
  EXPECT_EQ(hw::scalar_tensor(true).str(), "tensor(True" + suffix("[]", "bool"));
}

TEST(Printing, Empty) {
  EXPECT_EQ(hw::zeros({0}).str(), "tensor([]" + suffix("[0]", "float32"));
  EXPECT_EQ(hw::zeros({2, 0}, {.dtype = hw::kInt64}).str(), "tensor([]" + suffix("[2, 0]", "int64"));
}

TEST(Printing, ThreeDimensionsSeparateBlocksByBlankLines) {
  const hw::Tensor t = hw::arange(8).view({2, 2, 2});
  EXPECT_EQ(t.str(), "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]]" +
                         suffix("[2, 2, 2]", "int64"));
}

TEST(Printing, NonContiguousPrintsLogicalOrder) {
  const hw::Tensor t = hw::tensor<std::int64_t>({{1, 2}, {3, 4}}).t();
  ASSERT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.str(), "tensor([[1, 3],\n        [2, 4]]" + suffix("[2, 2]", "int64"));
  const hw::Tensor stepped = hw::arange(10).slice(0, 1, std::nullopt, 3);  // 1, 4, 7
  EXPECT_EQ(stepped.str(), "tensor([1, 4, 7]" + suffix("[3]", "int64"));
}

TEST(Printing, LongRowsWrapAtEightyColumns) {
  EXPECT_EQ(hw::arange(20.0).to(hw::kFloat32).str(),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19.]" + suffix("[20]", "float32"));
}

TEST(Printing, SummarisedBeyondAThousandElements) {
  EXPECT_EQ(hw::arange(1001).str(), "tensor([   0,    1,    2,  ...,  998,  999, 1000]" + suffix("[1001]", "int64"));
  EXPECT_EQ(hw::arange(1000).str().find("..."), std::string::npos);  // exactly the threshold: all shown
  const hw::Tensor t = hw::arange(10000).view({100, 100});
  EXPECT_EQ(t.str(),
            "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
            "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
            "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
            "        ...,\n"
            "        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n"
            "        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n"
            "        [9900, 9901, 9902,  ..., 9997, 9998, 9999]]" + suffix("[100, 100]", "int64"));
}

TEST(Printing, FormattingLooksOnlyAtShownValues) {
  // The hidden middle holds a huge value; the shown edges alone decide the format.
  hw::Tensor t = hw::ones({2000});
  t.narrow(0, 1000, 1).fill_(1e12);
  EXPECT_EQ(t.str(), "tensor([1., 1., 1.,  ..., 1., 1., 1.]" + suffix("[2000]", "float32"));
}

TEST(Printing, RequiresGradIsShown) {
  EXPECT_EQ(hw::ones({1}, {.requires_grad = true}).str(),
            "tensor([1.], shape=[1], dtype=float32, device=cpu, requires_grad=True)");
}

TEST(Printing, OtherDevicesAreCopiedToTheHostFirst) {
  const hw::Tensor t = hw::tensor({1.5f, -2.f}).to(hw::test::other_device());
  EXPECT_EQ(t.str(), "tensor([ 1.5000, -2.0000]" + suffix("[2]", "float32", "test:0"));
}

TEST(Printing, StreamOperatorMatchesStr) {
  const hw::Tensor t = hw::tensor({{1.f, 2.f}, {3.f, 4.f}});
  std::ostringstream out;
  out << t;
  EXPECT_EQ(out.str(), t.str());
  EXPECT_EQ(hw::Tensor().str(), "tensor(undefined)");
}

TEST(Printing, RandomValuesRoundTripThroughTheText) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const hw::Tensor t = hw::test::random_tensor({5}, hw::kFloat64, rng, -9.0, 9.0);
  const std::string s = t.str();
  // Fixed notation with 4 decimals: each value reads back within 5e-5.
  std::istringstream in(s.substr(std::string("tensor([").size()));
  for (double expected : hw::test::values_of(t)) {
    double value = 0;
    char comma = 0;
    in >> value >> comma;
    EXPECT_NEAR(value, expected, 5.0001e-5) << s;
  }
}
