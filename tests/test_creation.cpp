// Creation functions and TensorOptions: shapes, dtypes (given and inferred), devices,
// requires_grad, values against references, from_blob's shared memory, the _like forms.
#include <cmath>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

constexpr hw::DType kAll[] = {hw::kBool,    hw::kUInt8,     hw::kInt32,   hw::kInt64,
                              hw::kFloat16, hw::kBFloat16, hw::kFloat32, hw::kFloat64};

// value stored in dtype and read back as double (the reference of a fill).
double stored(double value, hw::DType dtype) {
  switch (dtype) {
    case hw::DType::Bool: return value != 0.0 ? 1.0 : 0.0;
    case hw::DType::UInt8: return static_cast<std::uint8_t>(static_cast<std::int64_t>(value));
    case hw::DType::Int32: return static_cast<std::int32_t>(value);
    case hw::DType::Int64: return static_cast<double>(static_cast<std::int64_t>(value));
    case hw::DType::Float16: return static_cast<float>(hw::Half(static_cast<float>(value)));
    case hw::DType::BFloat16: return static_cast<float>(hw::BFloat16(static_cast<float>(value)));
    case hw::DType::Float32: return static_cast<float>(value);
    case hw::DType::Float64: return value;
  }
  return 0.0;
}

std::vector<double> repeated(double v, std::size_t n) { return std::vector<double>(n, v); }

}  // namespace

TEST(Creation, EmptyHasTheRequestedGeometry) {
  const hw::Tensor t = hw::empty({2, 3, 4});
  EXPECT_EQ(t.sizes(), hw::IntArrayRef({2, 3, 4}));
  EXPECT_EQ(t.strides(), hw::IntArrayRef({12, 4, 1}));
  EXPECT_EQ(t.dtype(), hw::kFloat32);
  EXPECT_EQ(t.device(), hw::Device("cpu"));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.requires_grad());
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(hw::empty({}).dim(), 0);
  EXPECT_EQ(hw::empty({}).numel(), 1);
  EXPECT_EQ(hw::empty({0, 5}).numel(), 0);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::empty({2, -1}); }, "-1"));
  // Sizes whose element count, strides or bytes overflow int64 are refused, not wrapped round.
  const std::int64_t huge = std::int64_t{1} << 32;
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::empty({huge, huge}); }, "overflows a 64-bit integer"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::empty({huge, huge / 2}); }, "overflows a 64-bit integer"))
      << "2^63 elements fit no int64 count of bytes";
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::zeros({0, std::int64_t{1} << 62, 4}); },
                                               "overflows a 64-bit integer"))
      << "empty, but its first stride would be 2^64";
}

TEST(Creation, ZerosOnesFullInEveryDType) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const double value = std::uniform_real_distribution<double>(1.0, 100.0)(rng);
  for (hw::DType dtype : kAll) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    for (const auto& sizes : {std::vector<std::int64_t>{3, 5}, {}, {0}, {1}, {1000, 1001}}) {
      std::size_t n = 1;
      for (std::int64_t s : sizes) n *= static_cast<std::size_t>(s);
      const hw::Tensor z = hw::zeros(sizes, {.dtype = dtype});
      EXPECT_EQ(z.dtype(), dtype);
      EXPECT_EQ(z.sizes(), hw::IntArrayRef(sizes));
      EXPECT_EQ(hw::test::values_of(z), repeated(0.0, n));
      EXPECT_EQ(hw::test::values_of(hw::ones(sizes, {.dtype = dtype})), repeated(1.0, n));
      EXPECT_EQ(hw::test::values_of(hw::full(sizes, value, {.dtype = dtype})), repeated(stored(value, dtype), n));
    }
  }
  EXPECT_EQ(hw::zeros({2}).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::ones({2}).dtype(), hw::kFloat32);
}

TEST(Creation, FullInfersTheDTypeFromTheValue) {
  EXPECT_EQ(hw::full({2}, 3).dtype(), hw::kInt64);
  EXPECT_EQ(hw::full({2}, 2.5).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::full({2}, 2.5f).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::full({2}, true).dtype(), hw::kBool);
  // int64 values are exact beyond 2^53.
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  EXPECT_EQ(hw::full({2}, big).to_vector<std::int64_t>(), std::vector<std::int64_t>({big, big}));
  EXPECT_EQ(hw::scalar_tensor(7).dtype(), hw::kInt64);
  EXPECT_EQ(hw::scalar_tensor(0.5).item<double>(), 0.5);
  EXPECT_EQ(hw::scalar_tensor(0.5, {.dtype = hw::kFloat64}).dtype(), hw::kFloat64);
  EXPECT_EQ(hw::scalar_tensor(0.5).dim(), 0);
}

TEST(Creation, ArangeValuesAndDTypes) {
  EXPECT_EQ(hw::arange(5).dtype(), hw::kInt64);
  EXPECT_EQ(hw::arange(5).to_vector<std::int64_t>(), std::vector<std::int64_t>({0, 1, 2, 3, 4}));
  EXPECT_EQ(hw::arange(1, 10, 3).to_vector<std::int64_t>(), std::vector<std::int64_t>({1, 4, 7}));
  EXPECT_EQ(hw::arange(10, 0, -3).to_vector<std::int64_t>(), std::vector<std::int64_t>({10, 7, 4, 1}));
  EXPECT_EQ(hw::arange(0).numel(), 0);
  EXPECT_EQ(hw::arange(5, 0).numel(), 0);
  EXPECT_EQ(hw::arange(0.5, 3).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::test::values_of(hw::arange(0.5, 3)), std::vector<double>({0.5, 1.5, 2.5}));
  EXPECT_EQ(hw::arange(4, {.dtype = hw::kFloat16}).dtype(), hw::kFloat16);
  EXPECT_EQ(hw::test::values_of(hw::arange(4, {.dtype = hw::kFloat16})), std::vector<double>({0, 1, 2, 3}));
  EXPECT_EQ(hw::arange(4, {.dtype = hw::kInt32}).to_vector<std::int32_t>(), std::vector<std::int32_t>({0, 1, 2, 3}));

  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const double start = std::uniform_real_distribution<double>(-5, 5)(rng);
  const double step = std::uniform_real_distribution<double>(0.01, 0.5)(rng);
  const double end = start + std::uniform_real_distribution<double>(1, 20)(rng);
  for (hw::DType dtype : {hw::kFloat32, hw::kFloat64}) {
    const hw::Tensor t = hw::arange(start, end, step, {.dtype = dtype});
    const auto n = static_cast<std::int64_t>(std::ceil((end - start) / step));
    ASSERT_EQ(t.numel(), n);
    std::vector<double> expected;
    for (std::int64_t i = 0; i < n; ++i) expected.push_back(stored(start + static_cast<double>(i) * step, dtype));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(t), expected, 0, 0));
  }
  EXPECT_EQ(hw::arange(0, 1, 0.1).numel(), 10);
}

TEST(Creation, ArangeErrors) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::arange(0, 5, 0); }, "arange: step must be nonzero"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::arange(0, 5, 0.5, {.dtype = hw::kInt64}); },
                                               "an integer dtype needs integer start and step"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [] { hw::arange(0.0, std::numeric_limits<double>::infinity()); }, "must be finite"));
}

TEST(Creation, LinspaceMatchesTorchsFormula) {
  EXPECT_EQ(hw::test::values_of(hw::linspace(0, 1, 5)), std::vector<double>({0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(hw::linspace(0, 1, 5).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::test::values_of(hw::linspace(3, 9, 1)), std::vector<double>({3}));
  EXPECT_EQ(hw::linspace(3, 9, 0).numel(), 0);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::linspace(0, 1, -1); }, "number of steps must be non-negative"));

  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const double start = std::uniform_real_distribution<double>(-10, 10)(rng);
  const double end = std::uniform_real_distribution<double>(-10, 10)(rng);
  const std::int64_t steps = std::uniform_int_distribution<std::int64_t>(2, 300)(rng);
  const double step = (end - start) / static_cast<double>(steps - 1);
  std::vector<double> expected;
  for (std::int64_t i = 0; i < steps; ++i) expected.push_back(start + step * static_cast<double>(i));
  for (hw::DType dtype : {hw::kFloat64, hw::kFloat32, hw::kBFloat16}) {
    const hw::Tensor t = hw::linspace(start, end, steps, {.dtype = dtype});
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(t), expected, hw::test::rtol_for(dtype), 1e-12 + 20 * hw::test::atol_for(dtype)));
    EXPECT_EQ(hw::test::values_of(t).front(), stored(start, dtype));  // the ends are exact
    EXPECT_EQ(hw::test::values_of(t).back(), stored(end, dtype));
  }
}

TEST(Creation, EyeValues) {
  for (const auto& [n, m] : {std::pair<std::int64_t, std::int64_t>{3, 3}, {2, 4}, {4, 2}, {0, 0}, {1, 1}}) {
    const hw::Tensor t = hw::eye(n, m, {.dtype = hw::kInt64});
    ASSERT_EQ(t.sizes(), hw::IntArrayRef({n, m}));
    const auto v = hw::test::values_of(t);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < m; ++j) EXPECT_EQ(v[static_cast<std::size_t>(i * m + j)], i == j ? 1.0 : 0.0);
    }
  }
  EXPECT_EQ(hw::eye(3).sizes(), hw::IntArrayRef({3, 3}));
  EXPECT_EQ(hw::eye(3).dtype(), hw::kFloat32);
  EXPECT_TRUE(hw::eye(2, std::nullopt, {.requires_grad = true}).requires_grad());
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::eye(-1); }, "eye: sizes must be non-negative, got -1 x -1"));
}

TEST(Creation, TensorFromValuesInfersTheDType) {
  EXPECT_EQ(hw::tensor({1.f, 2.f}).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::tensor({1.0, 2.0}).dtype(), hw::kFloat64);
  EXPECT_EQ(hw::tensor<std::int32_t>({1, 2}).dtype(), hw::kInt32);
  EXPECT_EQ(hw::tensor<std::int64_t>({1, 2}).dtype(), hw::kInt64);
  EXPECT_EQ(hw::tensor<std::uint8_t>({1, 2}).dtype(), hw::kUInt8);
  EXPECT_EQ(hw::tensor({true, false}).dtype(), hw::kBool);
  EXPECT_EQ(hw::tensor({1.5, 2.5}, {.dtype = hw::kInt64}).to_vector<std::int64_t>(), std::vector<std::int64_t>({1, 2}));

  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  std::vector<double> values(37);
  for (double& v : values) v = std::uniform_real_distribution<double>(-3, 3)(rng);
  EXPECT_EQ(hw::test::values_of(hw::tensor(values)), values);
  const hw::Tensor shaped = hw::tensor(values, {37, 1});
  EXPECT_EQ(shaped.sizes(), hw::IntArrayRef({37, 1}));
  EXPECT_EQ(hw::test::values_of(shaped), values);
  std::vector<double> as_float;
  for (double v : values) as_float.push_back(static_cast<float>(v));
  EXPECT_EQ(hw::test::values_of(hw::tensor(values, {.dtype = hw::kFloat32})), as_float);

  const hw::Tensor nested = hw::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(nested.sizes(), hw::IntArrayRef({2, 3}));
  EXPECT_EQ(hw::test::values_of(nested), std::vector<double>({1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::tensor({{1.f, 2.f}, {3.f}}); },
                                               "rows of a nested list must have equal lengths, got 2 and 1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::tensor(std::vector<float>{1.f, 2.f, 3.f}, {2, 2}); },
                                               "3 values cannot fill a tensor of shape [2, 2]"));
  EXPECT_EQ(hw::tensor(std::vector<float>{}).numel(), 0);
}

TEST(Creation, OptionsPlaceAndFlagTheTensor) {
  const hw::Device other = hw::test::other_device();
  for (const hw::Tensor& t : {hw::zeros({2, 3}, {.device = other}), hw::ones({2, 3}, {.device = other}),
                              hw::full({2, 3}, 4.0, {.device = other}), hw::empty({2, 3}, {.device = other}),
                              hw::arange(6, {.dtype = hw::kFloat32, .device = other}).view({2, 3}),
                              hw::eye(2, 3, {.device = other}), hw::linspace(0, 1, 6, {.device = other}).view({2, 3}),
                              hw::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}, {.device = other})}) {
    EXPECT_EQ(t.device(), other);
    EXPECT_EQ(t.sizes(), hw::IntArrayRef({2, 3}));
  }
  EXPECT_EQ(hw::test::values_of(hw::full({2}, 4.0, {.device = other})), std::vector<double>({4, 4}));
  EXPECT_EQ(hw::zeros({2}, {.device = hw::Device("test")}).device(), hw::Device("test:0"));

  for (const hw::Tensor& t : {hw::zeros({2}, {.requires_grad = true}), hw::ones({2}, {.requires_grad = true}),
                              hw::empty({2}, {.requires_grad = true}), hw::full({2}, 1.5, {.requires_grad = true}),
                              hw::arange(0.0, 2.0, 1.0, {.requires_grad = true}),
                              hw::tensor({1.f, 2.f}, {.requires_grad = true})}) {
    EXPECT_TRUE(t.requires_grad());
  }
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::zeros({2}, {.dtype = hw::kInt64, .requires_grad = true}); },
                                               "only tensors of floating point dtype can require gradients, got int64"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::zeros({2}, {.device = other, .pin_memory = true}); },
                                               "pin_memory applies to CPU tensors only, but device is test:0"));
  // Without a GPU pinned memory falls back to pageable memory (with one warning) and still works.
  EXPECT_EQ(hw::test::values_of(hw::ones({3}, {.pin_memory = true})), std::vector<double>({1, 1, 1}));
}

TEST(Creation, FromBlobSharesTheCallersMemory) {
  float buffer[6] = {0, 1, 2, 3, 4, 5};
  hw::Tensor t = hw::from_blob(buffer, {2, 3});
  EXPECT_EQ(t.data_ptr(), static_cast<void*>(buffer));
  EXPECT_EQ(t.dtype(), hw::kFloat32);
  EXPECT_EQ(hw::test::values_of(t), std::vector<double>({0, 1, 2, 3, 4, 5}));
  buffer[4] = 40;  // seen through the tensor
  EXPECT_EQ(t.select(0, 1).select(0, 1).item<float>(), 40.f);
  t.fill_(7);  // written to the buffer
  for (float v : buffer) EXPECT_EQ(v, 7.f);

  std::int64_t ints[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const hw::Tensor strided = hw::from_blob(ints, {2, 2}, {4, 2}, {.dtype = hw::kInt64});
  EXPECT_FALSE(strided.is_contiguous());
  EXPECT_EQ(hw::test::values_of(strided), std::vector<double>({0, 2, 4, 6}));
  EXPECT_TRUE(hw::from_blob(buffer, {3}, hw::TensorOptions{.requires_grad = true}).requires_grad());
  EXPECT_TRUE(hw::from_blob(buffer, {2, 3}).is_alias_of(hw::from_blob(buffer, {2, 3})) == false);  // separate storages

  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::from_blob(nullptr, {2}); }, "from_blob: data is null"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::from_blob(ints, {2, 2}, {1}); }, "2 sizes but 1 strides"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::from_blob(ints, {2}, {-1}); },
                                               "sizes and strides must be non-negative"));
  EXPECT_EQ(hw::from_blob(nullptr, {0}).numel(), 0);
}

TEST(Creation, LikeFormsKeepShapeDTypeAndDevice) {
  const hw::Device other = hw::test::other_device();
  const hw::Tensor src = hw::full({2, 5}, 3, {.dtype = hw::kInt32, .device = other});
  for (const hw::Tensor& t : {hw::empty_like(src), hw::zeros_like(src), hw::ones_like(src), hw::full_like(src, 9)}) {
    EXPECT_EQ(t.sizes(), src.sizes());
    EXPECT_EQ(t.dtype(), hw::kInt32);
    EXPECT_EQ(t.device(), other);
    EXPECT_FALSE(t.is_alias_of(src));
  }
  EXPECT_EQ(hw::test::values_of(hw::zeros_like(src)), repeated(0, 10));
  EXPECT_EQ(hw::test::values_of(hw::ones_like(src)), repeated(1, 10));
  EXPECT_EQ(hw::test::values_of(hw::full_like(src, 9)), repeated(9, 10));
  EXPECT_EQ(hw::test::values_of(hw::full_like(src, 2.7)), repeated(2, 10));  // stored in src's dtype

  const hw::TensorOptions f64{.dtype = hw::kFloat64};
  for (const hw::Tensor& t : {hw::empty_like(src, f64), hw::zeros_like(src, f64), hw::ones_like(src, f64),
                              hw::full_like(src, 2.5, f64)}) {
    EXPECT_EQ(t.sizes(), src.sizes());
    EXPECT_EQ(t.dtype(), hw::kFloat64);
    EXPECT_EQ(t.device(), hw::Device("cpu"));  // the options' device
  }
  EXPECT_EQ(hw::test::values_of(hw::full_like(src, 2.5, f64)), repeated(2.5, 10));
  // A non-contiguous source gives a contiguous result of its shape.
  const hw::Tensor transposed = hw::zeros({3, 4}).t();
  EXPECT_TRUE(hw::zeros_like(transposed).is_contiguous());
  EXPECT_EQ(hw::zeros_like(transposed).sizes(), hw::IntArrayRef({4, 3}));
}
