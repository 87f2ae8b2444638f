#pragma once
// 16-bit floating-point storage types. Arithmetic converts to float; both
// conversions round to nearest even, as the hardware formats do.
#include <cstdint>
#include <cstring>

#include "hwaro/macros.h"

namespace hwaro {

namespace detail {
HWARO_HOST_DEVICE inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
HWARO_HOST_DEVICE inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace detail

// IEEE 754 binary16.
struct Half {
  std::uint16_t bits = 0;

  Half() = default;
  HWARO_HOST_DEVICE Half(float value) : bits(from_float(value)) {}  // NOLINT: as a float
  HWARO_HOST_DEVICE operator float() const { return to_float(bits); }  // NOLINT

  HWARO_HOST_DEVICE static std::uint16_t from_float(float f) {
    const std::uint32_t x = detail::float_bits(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
    if (abs < 0x38800000u) {  // below the smallest normal half: a subnormal or zero
      // Adding 0.5 makes the FPU do the rounding: the half's subnormal bits land in the low mantissa.
      const float shifted = detail::bits_float(abs) + 0.5f;
      return static_cast<std::uint16_t>(sign | (detail::float_bits(shifted) - 0x3f000000u));
    }
    const std::uint32_t odd = (abs >> 13) & 1u;
    const std::uint32_t rounded = abs + 0xc8000fffu + odd;  // rebias exponent (-112 << 23) and round
    return static_cast<std::uint16_t>(sign | (rounded >> 13));
  }

  HWARO_HOST_DEVICE static float to_float(std::uint16_t h) {
    const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return detail::bits_float(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
      const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
      return sign != 0 ? -magnitude : magnitude;
    }
    return detail::bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

// bfloat16: the upper half of a float32.
struct BFloat16 {
  std::uint16_t bits = 0;

  BFloat16() = default;
  HWARO_HOST_DEVICE BFloat16(float value) : bits(from_float(value)) {}  // NOLINT: as a float
  HWARO_HOST_DEVICE operator float() const { return detail::bits_float(static_cast<std::uint32_t>(bits) << 16); }  // NOLINT

  HWARO_HOST_DEVICE static std::uint16_t from_float(float f) {
    const std::uint32_t x = detail::float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>((x + rounding) >> 16);
  }
};

}  // namespace hwaro
