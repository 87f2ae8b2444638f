// Moving and copying: to(device) and to(dtype), cpu(), copy_, contiguous, clone, item, data_ptr,
// pin_memory, with the test backend's devices standing in for a GPU.
#include <cmath>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

constexpr hw::DType kAll[] = {hw::kBool,    hw::kUInt8,     hw::kInt32,   hw::kInt64,
                              hw::kFloat16, hw::kBFloat16, hw::kFloat32, hw::kFloat64};

// v converted to dtype as PyTorch casts (truncation toward zero for integers, != 0 for bool,
// 16-bit floats through float), read back as double.
double cast_reference(double v, hw::DType dtype) {
  switch (dtype) {
    case hw::DType::Bool: return v != 0.0 ? 1.0 : 0.0;
    case hw::DType::UInt8: return static_cast<std::uint8_t>(static_cast<std::int64_t>(v));
    case hw::DType::Int32: return static_cast<std::int32_t>(static_cast<std::int64_t>(v));
    case hw::DType::Int64: return static_cast<double>(static_cast<std::int64_t>(v));
    case hw::DType::Float16: return static_cast<float>(hw::Half(static_cast<float>(v)));
    case hw::DType::BFloat16: return static_cast<float>(hw::BFloat16(static_cast<float>(v)));
    case hw::DType::Float32: return static_cast<float>(v);
    case hw::DType::Float64: return v;
  }
  return 0.0;
}

std::vector<double> cast_reference(const std::vector<double>& values, hw::DType dtype) {
  std::vector<double> out;
  for (double v : values) out.push_back(cast_reference(v, dtype));
  return out;
}

}  // namespace

// First in the file: the warning is printed once per process.
TEST(ToDevice, PinMemoryWithoutAGpuWarnsOnceAndStillWorks) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a GPU is present: memory really is pinned";
  const hw::Tensor x = hw::arange(6.0).view({2, 3});
  ::testing::internal::CaptureStderr();
  const hw::Tensor p = x.pin_memory();
  const hw::Tensor q = x.t().pin_memory();
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string warning = "pinned memory was requested but no GPU is available; using pageable memory";
  std::size_t count = 0;
  for (auto at = err.find(warning); at != std::string::npos; at = err.find(warning, at + 1)) ++count;
  EXPECT_EQ(count, 1u) << err;
  EXPECT_EQ(hw::test::values_of(p), hw::test::values_of(x));
  EXPECT_EQ(hw::test::values_of(q), hw::test::values_of(x.t()));
  EXPECT_TRUE(p.is_cpu());
  EXPECT_FALSE(p.is_alias_of(x));
  EXPECT_FALSE(x.is_pinned());
  EXPECT_EQ(hw::test::values_of(p.to(hw::test::other_device(), /*non_blocking=*/true)), hw::test::values_of(x));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::ones({2}, {.device = hw::test::other_device()}).pin_memory(); },
                                               "pin_memory(): only CPU tensors can be pinned, this one is on test:0"));
}

TEST(ToDevice, SameDeviceAndDTypeSharesStorage) {
  const hw::Tensor x = hw::ones({2, 3});
  EXPECT_TRUE(x.to(hw::Device("cpu")).is_same(x));
  EXPECT_TRUE(x.to(hw::Device("cpu"), hw::kFloat32).is_alias_of(x));
  EXPECT_TRUE(x.to(hw::kFloat32).is_alias_of(x));
  EXPECT_TRUE(x.cpu().is_alias_of(x));
  EXPECT_TRUE(x.to(hw::TensorOptions{}).is_alias_of(x));
  const hw::Tensor forced = x.to(hw::Device("cpu"), /*non_blocking=*/false, /*copy=*/true);
  EXPECT_FALSE(forced.is_alias_of(x));
  EXPECT_EQ(hw::test::values_of(forced), hw::test::values_of(x));
  EXPECT_FALSE(x.to(hw::kFloat32, /*copy=*/true).is_alias_of(x));
  const hw::Tensor there = x.to(hw::test::other_device());
  EXPECT_TRUE(there.to(hw::Device("test:0")).is_alias_of(there));
  EXPECT_TRUE(there.to(hw::Device("test")).is_alias_of(there));  // no index: the current device, test:0
}

TEST(ToDevice, ToDTypeConvertsEveryPair) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (hw::DType from : kAll) {
    for (hw::DType to : kAll) {
      SCOPED_TRACE(std::string(hw::dtype_name(from)) + " -> " + hw::dtype_name(to));
      // Negative floats have no uint8 value (C++ leaves the cast undefined); integers wrap.
      const double lo = to == hw::kUInt8 && hw::is_floating_point(from) ? 0.0 : -300.0;
      for (const auto& sizes : {std::vector<std::int64_t>{5, 7}, {}, {0, 3}, {1}, {300, 301}}) {
        const hw::Tensor src = hw::test::random_tensor(sizes, from, rng, lo, 300.0);
        const std::vector<double> expected = cast_reference(hw::test::values_of(src), to);
        const hw::Tensor out = src.to(to);
        ASSERT_EQ(out.dtype(), to);
        ASSERT_EQ(out.sizes(), src.sizes());
        ASSERT_EQ(hw::test::values_of(out), expected);
        if (src.dim() == 2 && src.numel() > 1) {
          const hw::Tensor nc = hw::test::non_contiguous_copy(src);
          ASSERT_EQ(hw::test::values_of(nc.to(to)), expected);
          ASSERT_EQ(hw::test::values_of(src.t().to(to)), hw::test::values_of(out.t()));
        }
      }
    }
  }
}

TEST(ToDevice, SpecialValuesConvert) {
  const float inf = std::numeric_limits<float>::infinity();
  const hw::Tensor x = hw::tensor({0.5f, -0.0f, inf, -inf, std::nanf(""), 65520.f, 1e-8f});
  const auto half = hw::test::values_of(x.to(hw::kFloat16));
  EXPECT_EQ(half[0], 0.5);
  EXPECT_TRUE(std::signbit(half[1]));
  EXPECT_EQ(half[2], inf);
  EXPECT_EQ(half[3], -inf);
  EXPECT_TRUE(std::isnan(half[4]));
  EXPECT_EQ(half[5], inf);  // past half's largest finite value
  EXPECT_EQ(half[6], static_cast<float>(hw::Half(1e-8f)));  // a subnormal
  EXPECT_EQ(hw::test::values_of(x.to(hw::kBool)), std::vector<double>({1, 0, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(std::isnan(hw::test::values_of(x.to(hw::kBFloat16))[4]));
}

TEST(ToDevice, ToAnotherDeviceMakesANewTensor) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const hw::Device other = hw::test::other_device();
  for (hw::DType dtype : kAll) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    const hw::Tensor x = hw::test::random_tensor({4, 6}, dtype, rng);
    const auto before = hw::test::values_of(x);
    const std::uint32_t version = x.version();
    const hw::Tensor y = x.to(other);
    EXPECT_EQ(y.device(), other);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_FALSE(y.is_alias_of(x));
    EXPECT_EQ(hw::test::values_of(y), before);
    EXPECT_EQ(x.device(), hw::Device("cpu"));  // the source is untouched
    EXPECT_EQ(x.version(), version);
    EXPECT_EQ(hw::test::values_of(x), before);
    const hw::Tensor back = y.cpu();
    EXPECT_TRUE(back.is_cpu());
    EXPECT_FALSE(back.is_alias_of(y));
    EXPECT_EQ(hw::test::values_of(back), before);
    // Non-contiguous, converting and moving at once.
    const hw::Tensor z = x.t().to(other, hw::kFloat64);
    EXPECT_EQ(z.device(), other);
    EXPECT_EQ(z.dtype(), hw::kFloat64);
    EXPECT_EQ(hw::test::values_of(z), hw::test::values_of(x.t().to(hw::kFloat64)));
    EXPECT_EQ(hw::test::values_of(x.to({.dtype = hw::kFloat32, .device = other})), hw::test::values_of(x.to(hw::kFloat32)));
  }
  EXPECT_EQ(hw::zeros({0, 2}).to(other).sizes(), hw::IntArrayRef({0, 2}));
  EXPECT_EQ(hw::scalar_tensor(3.0).to(other).item<double>(), 3.0);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { (void)hw::Tensor().to(hw::kFloat32); }, "this tensor is undefined"));
}

TEST(ToDevice, BetweenTwoTestDevices) {
  hw::test::other_device();
  const hw::Device d1("test:1"), d2("test:2");
  const hw::Tensor a = hw::arange(6.0).to(d1);
  const hw::Tensor b = a.to(d2);
  EXPECT_EQ(a.device(), d1);
  EXPECT_EQ(b.device(), d2);
  EXPECT_EQ(hw::test::values_of(b), hw::test::values_of(a));
  EXPECT_TRUE(hw::test::throws_with<hw::DeviceMismatchError>(
      [&] { (void)(a + b); },
      "Expected all tensors to be on the same device, but found at least two devices, test:1 and test:2! "
      "(when checking argument 'other' of add)"));
  // copy_ is the one op that moves data between devices.
  hw::Tensor dst = hw::zeros({6}, {.device = d2});
  dst.copy_(a);
  EXPECT_EQ(hw::test::values_of(dst), hw::test::values_of(a));
}

TEST(ToDevice, CopyConvertsAndBroadcasts) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (hw::DType from : {hw::kFloat32, hw::kInt64, hw::kBFloat16}) {
    for (hw::DType to : {hw::kFloat64, hw::kInt32, hw::kFloat16}) {
      const hw::Tensor row = hw::test::random_tensor({4}, from, rng, 0.0, 50.0);
      const auto expected_row = cast_reference(hw::test::values_of(row), to);
      for (const hw::Device device : {hw::Device("cpu"), hw::test::other_device()}) {
        hw::Tensor dst = hw::zeros({3, 4}, {.dtype = to, .device = device});
        const std::uint32_t version = dst.version();
        dst.copy_(row);  // across dtypes and, for the test device, across devices
        EXPECT_EQ(dst.version(), version + 1);
        std::vector<double> expected;
        for (int r = 0; r < 3; ++r) expected.insert(expected.end(), expected_row.begin(), expected_row.end());
        EXPECT_EQ(hw::test::values_of(dst), expected);
        // Into a non-contiguous destination.
        hw::Tensor target = hw::zeros({4, 3}, {.dtype = to, .device = device});
        hw::Tensor view = target.t();
        view.copy_(row.unsqueeze(0));
        EXPECT_EQ(hw::test::values_of(view), expected);
      }
    }
  }
  hw::Tensor dst = hw::zeros({3, 4});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { dst.copy_(hw::zeros({2, 3, 4})); },
                                               "copy_: source of shape [2, 3, 4] cannot be broadcast to the destination's shape [3, 4]"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { dst.copy_(hw::zeros({5})); }, "copy_"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { dst.copy_(hw::Tensor()); }, "src"));
}

TEST(ToDevice, ContiguousAndClone) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const hw::Tensor x = hw::test::random_tensor({3, 5}, hw::kFloat32, rng);
  EXPECT_TRUE(x.contiguous().is_same(x));
  const hw::Tensor t = x.t();
  const hw::Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_FALSE(c.is_alias_of(x));
  EXPECT_EQ(c.strides(), hw::IntArrayRef({3, 1}));
  EXPECT_EQ(hw::test::values_of(c), hw::test::values_of(t));
  for (const hw::Tensor& src : {x, t, x.to(hw::test::other_device())}) {
    const hw::Tensor k = src.clone();
    EXPECT_FALSE(k.is_alias_of(src));
    EXPECT_TRUE(k.is_contiguous());
    EXPECT_EQ(k.device(), src.device());
    EXPECT_EQ(hw::test::values_of(k), hw::test::values_of(src));
  }
  hw::Tensor k = x.clone();
  k.fill_(0);  // the clone is independent
  EXPECT_NE(hw::test::values_of(x), hw::test::values_of(k));
}

TEST(ToDevice, ItemAndDataPtr) {
  EXPECT_EQ(hw::scalar_tensor(2.5).item<float>(), 2.5f);
  EXPECT_EQ(hw::scalar_tensor(2.5).item<double>(), 2.5);
  EXPECT_EQ(hw::scalar_tensor(2.5).item<std::int64_t>(), 2);
  EXPECT_EQ(hw::full({1, 1}, 7, {.dtype = hw::kInt32}).item<int>(), 7);
  EXPECT_EQ(hw::full({1}, true).item<bool>(), true);
  EXPECT_EQ(hw::full({1}, 1.5, {.dtype = hw::kBFloat16}).item<float>(), 1.5f);
  EXPECT_EQ(hw::full({1}, 9, {.device = hw::test::other_device()}).item<std::int64_t>(), 9);
  EXPECT_TRUE(hw::scalar_tensor(3).item().is_integral());
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::zeros({2, 3}).item<float>(); },
                                               "item(): a Tensor with 6 elements cannot be converted to a Scalar"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::zeros({0}).item<float>(); }, "a Tensor with 0 elements"));

  hw::Tensor x = hw::arange(6.0).view({2, 3});
  float* p = x.data_ptr<float>();
  EXPECT_EQ(p[4], 4.f);
  EXPECT_EQ(static_cast<void*>(p), x.data_ptr());
  EXPECT_EQ(x.select(0, 1).data_ptr<float>(), p + 3);  // the first element of the view
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { x.data_ptr<std::int64_t>(); },
                                               "data_ptr<int64>() called on a tensor of dtype float32"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { x.data_ptr<double>(); }, "use to(float64) first"));
  EXPECT_EQ(x.to_vector<std::int32_t>(), std::vector<std::int32_t>({0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(x.t().to_vector<float>(), std::vector<float>({0, 3, 1, 4, 2, 5}));
}

TEST(ToDevice, DetachSharesStorageWithoutGrad) {
  const hw::Tensor x = hw::ones({3}, {.requires_grad = true});
  const hw::Tensor d = x.detach();
  EXPECT_TRUE(d.is_alias_of(x));
  EXPECT_FALSE(d.requires_grad());
}
