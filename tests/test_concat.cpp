// cat and stack against references computed here from the inputs' values, on fresh random
// inputs: every dim (negative too), several dtypes and their promotion, non-contiguous inputs,
// zero-size and one-element inputs, PyTorch's legacy skipping of 1-D empty tensors, and every
// error message including the device check.
#include <numeric>

#include "support/test_support.h"

namespace hw = hwaro;
using Shape = std::vector<std::int64_t>;

namespace {

constexpr hw::DType kDTypes[] = {hw::kFloat32, hw::kFloat64, hw::kInt64, hw::kBool};

Shape shape_of(const hw::Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }
std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// The values of inputs (all of rank `ndim`) laid side by side along dim, in row-major order.
std::vector<double> cat_ref(const std::vector<hw::Tensor>& inputs, std::int64_t dim) {
  // outer = product of sizes before dim; each input contributes a block of size(dim) * inner per outer row.
  std::vector<std::vector<double>> values;
  for (const auto& t : inputs) values.push_back(hw::test::values_of(t));
  const Shape s0 = shape_of(inputs.front());
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < dim; ++d) outer *= s0[at(d)];
  for (std::size_t d = at(dim) + 1; d < s0.size(); ++d) inner *= s0[d];
  std::vector<double> out;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::int64_t block = inputs[k].size(dim) * inner;
      for (std::int64_t i = 0; i < block; ++i) out.push_back(values[k][at(o * block + i)]);
    }
  }
  return out;
}

std::string device_message(const char* op) {
  return std::string("Expected all tensors to be on the same device, but found at least two devices, cpu and test:0! "
                     "(when checking argument 'tensors' of ") +
         op + ")";
}

class Concat : public ::testing::Test {
 protected:
  void SetUp() override { seed_ = hw::test::fresh_seed(); rng_.seed(seed_); }
  hw::Tensor random(const Shape& s, hw::DType dt) { return hw::test::random_tensor(s, dt, rng_); }
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

TEST_F(Concat, CatEveryDimDTypeAndLayout) {
  SCOPED_TRACE(seed_);
  for (hw::DType dt : kDTypes) {
    for (std::int64_t dim = -3; dim < 3; ++dim) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dt << " dim " << dim << " strided " << strided);
        const std::int64_t d = (dim + 3) % 3;
        std::vector<hw::Tensor> inputs, laid_out;
        Shape expected{3, 4, 5};
        expected[at(d)] = 0;
        for (std::int64_t len : {2, 1, 3}) {
          Shape s{3, 4, 5};
          s[at(d)] = len;
          expected[at(d)] += len;
          inputs.push_back(random(s, dt));
          laid_out.push_back(strided ? hw::test::non_contiguous_copy(inputs.back()) : inputs.back());
        }
        const hw::Tensor out = hw::cat(laid_out, dim);
        EXPECT_EQ(shape_of(out), expected);
        EXPECT_EQ(out.dtype(), dt);
        EXPECT_TRUE(out.is_contiguous());
        EXPECT_EQ(hw::test::values_of(out), cat_ref(inputs, d));
      }
    }
  }
}

TEST_F(Concat, CatTransposedInputsAndLargeInputs) {
  SCOPED_TRACE(seed_);
  const hw::Tensor a = random({5, 4}, hw::kFloat32).t();  // [4, 5], strides (1, 4)
  const hw::Tensor b = random({4, 2}, hw::kFloat32);
  EXPECT_EQ(hw::test::values_of(hw::cat({a, b}, 1)), cat_ref({a.contiguous(), b}, 1));
  const hw::Tensor big_a = random({300, 200}, hw::kFloat64), big_b = random({300, 150}, hw::kFloat64);
  EXPECT_EQ(hw::test::values_of(hw::cat({big_a, big_b}, -1)), cat_ref({big_a, big_b}, 1));
}

TEST_F(Concat, CatPromotesDTypes) {
  SCOPED_TRACE(seed_);
  const struct {
    hw::DType a, b, result;
  } cases[] = {{hw::kInt64, hw::kFloat32, hw::kFloat32},
               {hw::kBool, hw::kInt64, hw::kInt64},
               {hw::kInt32, hw::kFloat64, hw::kFloat64},
               {hw::kFloat32, hw::kFloat64, hw::kFloat64},
               {hw::kBool, hw::kFloat32, hw::kFloat32}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.a << " + " << c.b);
    const hw::Tensor a = random({2, 3}, c.a), b = random({4, 3}, c.b);
    const hw::Tensor out = hw::cat({a, b});
    EXPECT_EQ(out.dtype(), c.result);
    EXPECT_EQ(hw::test::values_of(out), cat_ref({a, b}, 0));
  }
}

TEST_F(Concat, CatSkipsOneDimensionalEmptyTensorsAndHandlesZeroSize) {
  SCOPED_TRACE(seed_);
  const hw::Tensor a = random({2, 3}, hw::kFloat32), b = random({4, 3}, hw::kFloat32);
  const hw::Tensor none = hw::empty({0}, {.dtype = hw::kFloat64});
  // Skipped whatever dim is, but its dtype still takes part in promotion.
  const hw::Tensor out = hw::cat({none, a, none, b}, 0);
  EXPECT_EQ(shape_of(out), (Shape{6, 3}));
  EXPECT_EQ(out.dtype(), hw::kFloat64);
  EXPECT_EQ(hw::test::values_of(out), cat_ref({a, b}, 0));
  EXPECT_EQ(shape_of(hw::cat({a, none}, 1)), (Shape{2, 3}));
  EXPECT_EQ(shape_of(hw::cat({none, none})), (Shape{0}));
  // A zero-size input of the right rank takes part (and must match the other sizes).
  const hw::Tensor zero_rows = hw::empty({0, 3});
  EXPECT_EQ(hw::test::values_of(hw::cat({zero_rows, a, zero_rows}, 0)), hw::test::values_of(a));
  EXPECT_EQ(shape_of(hw::cat({hw::empty({2, 0}), hw::empty({2, 0})}, 1)), (Shape{2, 0}));
  EXPECT_EQ(shape_of(hw::cat({hw::empty({0, 3}), hw::empty({0, 3})}, 1)), (Shape{0, 6}));
  // One element, and a single input (a new tensor, not a view).
  const hw::Tensor one = random({1}, hw::kFloat64), two = random({1}, hw::kFloat64);
  EXPECT_EQ(hw::test::values_of(hw::cat({one, two})),
            (std::vector<double>{hw::test::values_of(one)[0], hw::test::values_of(two)[0]}));
  const hw::Tensor alone = hw::cat({a});
  EXPECT_FALSE(alone.is_alias_of(a));
  EXPECT_EQ(hw::test::values_of(alone), hw::test::values_of(a));
}

TEST_F(Concat, CatErrors) {
  const hw::Tensor a = hw::zeros({2, 3}), b = hw::zeros({2, 4});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::cat({}); }, "cat(): expected a non-empty list of Tensors"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::cat({a, a, b}, 0); },
      "cat(): Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 2 in "
      "the list (dimension 1)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::cat({a, hw::zeros({2, 3, 1})}, 0); },
      "cat(): Tensors must have same number of dimensions: got 2 and 3 (tensor number 1 in the list)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::cat({a, hw::scalar_tensor(1.0)}); },
      "cat(): zero-dimensional tensor (at position 1) cannot be concatenated; unsqueeze it to 1-D first"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { hw::cat({a, a}, 2); },
                                                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::cat({a, hw::Tensor()}); },
                                               "cat(): tensor number 1 in the list is undefined"));
  const hw::Tensor other = hw::zeros({2, 3}, {.device = hw::test::other_device()});
  EXPECT_TRUE(hw::test::throws_with<hw::DeviceMismatchError>([&] { hw::cat({a, a, other}); }, device_message("cat")));
}

TEST_F(Concat, StackEveryDimDTypeAndLayout) {
  SCOPED_TRACE(seed_);
  const Shape shape{3, 4, 2};
  for (hw::DType dt : kDTypes) {
    for (std::int64_t dim = -4; dim < 4; ++dim) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dt << " dim " << dim << " strided " << strided);
        const std::int64_t d = (dim + 4) % 4;
        std::vector<hw::Tensor> inputs, laid_out, unsqueezed;
        for (int k = 0; k < 3; ++k) {
          inputs.push_back(random(shape, dt));
          laid_out.push_back(strided ? hw::test::non_contiguous_copy(inputs.back()) : inputs.back());
          unsqueezed.push_back(inputs.back().unsqueeze(d));
        }
        const hw::Tensor out = hw::stack(laid_out, dim);
        Shape expected = shape;
        expected.insert(expected.begin() + d, 3);
        EXPECT_EQ(shape_of(out), expected);
        EXPECT_EQ(out.dtype(), dt);
        EXPECT_EQ(hw::test::values_of(out), cat_ref(unsqueezed, d));
        // out.select(d, k) is input k.
        for (std::int64_t k = 0; k < 3; ++k) {
          EXPECT_EQ(hw::test::values_of(out.select(d, k)), hw::test::values_of(inputs[at(k)]));
        }
      }
    }
  }
}

TEST_F(Concat, StackZeroSizeOneElementAndScalars) {
  SCOPED_TRACE(seed_);
  EXPECT_EQ(shape_of(hw::stack({hw::empty({0, 3}), hw::empty({0, 3})}, 1)), (Shape{0, 2, 3}));
  const hw::Tensor a = hw::scalar_tensor(1.5), b = hw::scalar_tensor(-2.0);
  const hw::Tensor s = hw::stack({a, b});
  EXPECT_EQ(shape_of(s), (Shape{2}));
  EXPECT_EQ(hw::test::values_of(s), (std::vector<double>{1.5, -2.0}));
  const hw::Tensor x = random({1}, hw::kInt64);
  EXPECT_EQ(hw::test::values_of(hw::stack({x}, -1)), hw::test::values_of(x));
  EXPECT_EQ(shape_of(hw::stack({x}, -1)), (Shape{1, 1}));
  // Promotion as cat.
  EXPECT_EQ(hw::stack({hw::zeros({2}, {.dtype = hw::kInt64}), hw::zeros({2})}).dtype(), hw::kFloat32);
}

TEST_F(Concat, StackErrors) {
  const hw::Tensor a = hw::zeros({2, 3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::stack({}); }, "stack(): expected a non-empty list of Tensors"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::stack({a, a, hw::zeros({2, 4})}); },
      "stack(): expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 2"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { hw::stack({a, a}, 3); },
                                                    "Dimension out of range (expected to be in range of [-3, 2], but got 3)"));
  const hw::Tensor other = hw::zeros({2, 3}, {.device = hw::test::other_device()});
  EXPECT_TRUE(hw::test::throws_with<hw::DeviceMismatchError>([&] { hw::stack({a, other}); }, device_message("stack")));
}

}  // namespace
