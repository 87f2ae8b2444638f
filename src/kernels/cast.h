#pragma once
// cast_value: one element from one dtype's C++ type to another's, as PyTorch
// casts: to bool is "not zero", 16-bit floats go through float, a float to an integer truncates.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hwaro/half.h"
#include "hwaro/macros.h"

namespace hwaro::kernels {

template <typename T> inline constexpr bool is_half_like_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };
template <typename T> using compute_t = typename ComputeType<T>::type;

// A float truncated to a signed integer type. Where C++ leaves it undefined (NaN, infinities,
// values out of range) the result is the type's lowest value, as x86's truncating conversion
// (what PyTorch's CPU kernels give there), on every backend.
template <typename To, typename From> HWARO_HOST_DEVICE inline To truncate_to_signed(From v) {
  // 2^(digits) is exact in From; To's lowest, -2^(digits), is in range, To's max + 1 is not.
  constexpr From limit = static_cast<From>(std::numeric_limits<To>::max()) + From(1);
  return v >= -limit && v < limit ? static_cast<To>(v) : std::numeric_limits<To>::lowest();
}

template <typename To, typename From> HWARO_HOST_DEVICE inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_like_v<From>) {
    return cast_value<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_half_like_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && std::is_signed_v<To>) {
    return truncate_to_signed<To>(v);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // As PyTorch's c10 cast: to an unsigned type through int64, so -1.0 is 255 as a uint8.
    return static_cast<To>(truncate_to_signed<std::int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace hwaro::kernels
