// DTypes: PyTorch's promotion table, result_type with scalars, element sizes and names, and the
// 16-bit float conversions against a float64 reference (round to nearest even everywhere).
#include <cmath>
#include <cstring>
#include <limits>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

constexpr hw::DType kAll[] = {hw::kBool,    hw::kUInt8,     hw::kInt32,   hw::kInt64,
                              hw::kFloat16, hw::kBFloat16, hw::kFloat32, hw::kFloat64};

// The correctly rounded value of f in a binary format with `mantissa_bits` stored bits, minimum
// normal exponent `min_exp` and largest finite value `max_finite`, computed exactly in double.
double round_reference(float f, int mantissa_bits, int min_exp, double max_finite) {
  if (std::isnan(f)) return std::numeric_limits<double>::quiet_NaN();
  const double x = f;
  if (x == 0.0 || std::isinf(x)) return x;
  int e = 0;
  std::frexp(std::abs(x), &e);
  const int exponent = std::max(e - 1, min_exp);
  const double ulp = std::ldexp(1.0, exponent - mantissa_bits);
  const double rounded = std::nearbyint(std::abs(x) / ulp) * ulp;  // default mode: ties to even
  // Past the largest finite value by half an ulp or more: infinity.
  const double top_ulp = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(max_finite))) - mantissa_bits);
  const double magnitude = std::abs(x) >= max_finite + top_ulp / 2 ? std::numeric_limits<double>::infinity() : rounded;
  return std::signbit(x) ? -magnitude : magnitude;
}
double half_reference(float f) { return round_reference(f, 10, -14, 65504.0); }
double bfloat16_reference(float f) {
  return round_reference(f, 7, -126, static_cast<double>(std::numeric_limits<float>::max()) * (1.0 - std::ldexp(1.0, -8)) /
                                         (1.0 - std::ldexp(1.0, -24)));
}

float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

::testing::AssertionResult same_value(double actual, double expected, float input) {
  if ((std::isnan(actual) && std::isnan(expected)) ||
      (actual == expected && std::signbit(actual) == std::signbit(expected))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "input " << std::hexfloat << input << ": got " << actual << ", expected "
                                       << expected;
}

}  // namespace

TEST(DType, PromoteTypesMatchesPyTorch) {
  // torch.promote_types for b1, u1, i4, i8, f2, bf, f4, f8 (rows and columns in that order).
  using D = hw::DType;
  const D b = D::Bool, u = D::UInt8, i = D::Int32, l = D::Int64, h = D::Float16, bf = D::BFloat16, f = D::Float32,
          d = D::Float64;
  const D table[8][8] = {
      /* b1 */ {b, u, i, l, h, bf, f, d},
      /* u1 */ {u, u, i, l, h, bf, f, d},
      /* i4 */ {i, i, i, l, h, bf, f, d},
      /* i8 */ {l, l, l, l, h, bf, f, d},
      /* f2 */ {h, h, h, h, h, f, f, d},
      /* bf */ {bf, bf, bf, bf, f, bf, f, d},
      /* f4 */ {f, f, f, f, f, f, f, d},
      /* f8 */ {d, d, d, d, d, d, d, d},
  };
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) {
      SCOPED_TRACE(std::string(hw::dtype_name(kAll[r])) + " with " + hw::dtype_name(kAll[c]));
      EXPECT_EQ(hw::promote_types(kAll[r], kAll[c]), table[r][c]);
      EXPECT_EQ(hw::promote_types(kAll[c], kAll[r]), table[r][c]);  // symmetric
    }
  }
  static_assert(hw::promote_types(hw::kFloat16, hw::kBFloat16) == hw::kFloat32);
}

TEST(DType, ResultTypeWithScalars) {
  // A scalar changes the result only when it is of a higher kind (bool < integer < float), and
  // then gives that kind's default dtype.
  for (hw::DType t : kAll) {
    SCOPED_TRACE(hw::dtype_name(t));
    EXPECT_EQ(hw::result_type(t, hw::Scalar(true)), t);
    EXPECT_EQ(hw::result_type(t, hw::Scalar(2.5)), hw::is_floating_point(t) ? t : hw::kFloat32);
    EXPECT_EQ(hw::result_type(t, hw::Scalar(std::int64_t{1} << 40)), t == hw::kBool ? hw::kInt64 : t);
    EXPECT_EQ(hw::result_type(t, hw::Scalar(3)), t == hw::kBool ? hw::kInt64 : t);
  }
  EXPECT_EQ(hw::Scalar(1.5f).default_dtype(), hw::kFloat32);
  EXPECT_EQ(hw::Scalar(1.5).default_dtype(), hw::kFloat32);
  EXPECT_EQ(hw::Scalar(7).default_dtype(), hw::kInt64);
  EXPECT_EQ(hw::Scalar(false).default_dtype(), hw::kBool);
}

TEST(DType, SizesNamesAndKinds) {
  const std::size_t sizes[] = {1, 1, 4, 8, 2, 2, 4, 8};
  const char* names[] = {"bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(hw::element_size(kAll[k]), sizes[k]);
    EXPECT_STREQ(hw::dtype_name(kAll[k]), names[k]);
    std::ostringstream out;
    out << kAll[k];
    EXPECT_EQ(out.str(), names[k]);
    EXPECT_EQ(hw::zeros({3}, {.dtype = kAll[k]}).element_size(), sizes[k]);
    EXPECT_EQ(hw::zeros({3}, {.dtype = kAll[k]}).nbytes(), 3 * sizes[k]);
    EXPECT_EQ(hw::is_floating_point(kAll[k]), k >= 4);
    EXPECT_EQ(hw::is_integral(kAll[k]), k >= 1 && k <= 3);
  }
  EXPECT_EQ(hw::dtype_of<hw::Half>(), hw::kFloat16);
  EXPECT_EQ(hw::dtype_of<hw::BFloat16>(), hw::kBFloat16);
  EXPECT_EQ(hw::dtype_of<std::int32_t>(), hw::kInt32);
  EXPECT_EQ(hw::kHalf, hw::kFloat16);
  EXPECT_EQ(hw::kDouble, hw::kFloat64);
}

TEST(DType, HalfRoundsToNearestEvenOnRandomFloats) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  std::uniform_int_distribution<int> exponent(-27, 17);  // around half's range, subnormals included
  std::uniform_int_distribution<std::uint32_t> mantissa(0, (1u << 23) - 1);
  for (int k = 0; k < 400000; ++k) {
    float f;
    if (k % 2 == 0) {
      f = float_from_bits(any_bits(rng));
    } else {
      f = std::ldexp(1.0f + static_cast<float>(mantissa(rng)) * 0x1p-23f, exponent(rng));
      if (k % 4 == 1) f = -f;
    }
    ASSERT_TRUE(same_value(static_cast<float>(hw::Half(f)), half_reference(f), f));
  }
}

TEST(DType, BFloat16RoundsToNearestEvenOnRandomFloats) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int k = 0; k < 400000; ++k) {
    const float f = float_from_bits(any_bits(rng));
    ASSERT_TRUE(same_value(static_cast<float>(hw::BFloat16(f)), bfloat16_reference(f), f));
  }
}

TEST(DType, SixteenBitRoundTripsAreExact) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    hw::Half h;
    h.bits = static_cast<std::uint16_t>(bits);
    const float f = h;
    const hw::Half back(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(back)));
    } else {
      ASSERT_EQ(back.bits, h.bits) << std::hex << bits;
    }
    hw::BFloat16 b;
    b.bits = static_cast<std::uint16_t>(bits);
    const hw::BFloat16 bback(static_cast<float>(b));
    if (std::isnan(static_cast<float>(b))) {
      EXPECT_TRUE(std::isnan(static_cast<float>(bback)));
    } else {
      ASSERT_EQ(bback.bits, b.bits) << std::hex << bits;
    }
  }
}

TEST(DType, SixteenBitEdgeCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(static_cast<float>(hw::Half(1.0f + 0x1p-11f)), 1.0f);                 // tie: to even (down)
  EXPECT_EQ(static_cast<float>(hw::Half(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);    // tie: to even (up)
  EXPECT_EQ(static_cast<float>(hw::Half(65504.0f)), 65504.0f);
  EXPECT_EQ(static_cast<float>(hw::Half(65519.0f)), 65504.0f);
  EXPECT_EQ(static_cast<float>(hw::Half(65520.0f)), inf);
  EXPECT_EQ(static_cast<float>(hw::Half(-1e6f)), -inf);
  EXPECT_EQ(static_cast<float>(hw::Half(0x1p-24f)), 0x1p-24f);                     // smallest subnormal
  EXPECT_EQ(static_cast<float>(hw::Half(0x1p-25f)), 0.0f);                         // tie to even: zero
  EXPECT_EQ(static_cast<float>(hw::Half(0x1.8p-25f)), 0x1p-24f);
  EXPECT_EQ(static_cast<float>(hw::Half(0x1.ffcp-15f)), 0x1p-14f);  // a tie past the largest subnormal: up, into the normals
  EXPECT_EQ(hw::Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(hw::Half(inf).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(static_cast<float>(hw::Half(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(hw::BFloat16(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(static_cast<float>(hw::BFloat16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  EXPECT_EQ(static_cast<float>(hw::BFloat16(std::numeric_limits<float>::max())), inf);
  EXPECT_EQ(static_cast<float>(hw::BFloat16(-inf)), -inf);
  EXPECT_EQ(hw::BFloat16(-0.0f).bits, 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(hw::BFloat16(-std::nanf("")))));
  EXPECT_EQ(static_cast<float>(hw::BFloat16(0x1p-133f)), 0x1p-133f);               // float subnormals stay
}

// A float to an integer dtype truncates; where C++ leaves the cast undefined (NaN, infinities, out
// of range) the result is the dtype's lowest value, as PyTorch's CPU kernels give on x86, and a
// uint8 goes through int64 as c10's cast does, so -1.0 is 255. The CI sanitizers do not flag a
// float-to-int overflow (GCC leaves it out of -fsanitize=undefined), so the values are checked.
TEST(DType, FloatToIntegerCastsAreDefinedEverywhere) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const hw::Tensor x = hw::tensor(std::vector<double>{3.7, -3.7, nan, inf, -inf, 1e20, -9.3e18});
  constexpr std::int64_t lowest64 = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(x.to(hw::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{3, -3, lowest64, lowest64, lowest64, lowest64, lowest64}));
  constexpr std::int32_t lowest32 = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(hw::tensor(std::vector<float>{2.5f, std::nanf(""), 3e9f, -2147483648.0f}).to(hw::kInt32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{2, lowest32, lowest32, lowest32}));
  EXPECT_EQ(hw::tensor(std::vector<float>{-1.0f, -3.0f, 255.9f}).to(hw::kUInt8).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{255, 253, 255}));
}

// As PyTorch's checked_convert: an integral tensor is not filled with a value its dtype cannot hold.
TEST(DType, FillingAnIntegerTensorRefusesAValueItCannotHold) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::full({2}, nan, {.dtype = hw::kInt64}); },
                                               "cannot be converted to type int64 without overflow"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::full({2}, 1e19, {.dtype = hw::kInt32}); },
                                               "without overflow"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::full({2}, 300, {.dtype = hw::kUInt8}); },
                                               "value 300 cannot be converted to type uint8 without overflow"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::full({2}, std::int64_t{1} << 40, {.dtype = hw::kInt32}); },
                                               "without overflow"));
  EXPECT_EQ(hw::full({1}, -1, {.dtype = hw::kUInt8}).to_vector<std::uint8_t>(), std::vector<std::uint8_t>{255});
  const std::int64_t big = (std::int64_t{1} << 62) + 1;  // not exact as a double
  EXPECT_EQ(hw::full({1}, big, {.dtype = hw::kInt64}).to_vector<std::int64_t>(), std::vector<std::int64_t>{big});
  EXPECT_EQ(hw::full({1}, 7.9, {.dtype = hw::kInt64}).to_vector<std::int64_t>(), std::vector<std::int64_t>{7});
}
