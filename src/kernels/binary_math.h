#pragma once
// Scalar bodies of the binary elementwise ops, shared by the CPU loops and the CUDA
// kernels. Arithmetic takes the compute type (float for Half and BFloat16);
// bool arithmetic follows PyTorch (add is "or", mul is "and").
#include <cstdint>
#include <type_traits>

#include "hwaro/macros.h"
#include "kernels/unary_math.h"

namespace hwaro::kernels {

// Signed integer overflow is undefined in C++, and PyTorch's integer add, sub and mul wrap (two's
// complement): signed integers are added and multiplied in the unsigned type of their width, whose
// arithmetic wraps, and converted back (modular since C++20).
template <typename T> inline constexpr bool is_signed_integer_v = std::is_integral_v<T> && std::is_signed_v<T>;

template <typename T> HWARO_HOST_DEVICE inline T add(T a, T b, T alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || (alpha && b);
  } else if constexpr (is_signed_integer_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(alpha) * static_cast<U>(b));
  } else {
    return static_cast<T>(a + alpha * b);
  }
}

// Sub has no bool form (the op rejects it, as PyTorch).
template <typename T> HWARO_HOST_DEVICE inline T sub(T a, T b, T alpha) {
  if constexpr (is_signed_integer_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(alpha) * static_cast<U>(b));
  } else {
    return static_cast<T>(a - alpha * b);
  }
}

template <typename T> HWARO_HOST_DEVICE inline T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (is_signed_integer_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

// True division, floating types only: integer inputs are converted to float32 by the op,
// so a zero divisor gives inf or nan, never a trap.
template <typename T> HWARO_HOST_DEVICE inline T div(T a, T b) { return a / b; }

template <typename T> HWARO_HOST_DEVICE inline T pow(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return int_pow(a, static_cast<std::int64_t>(b));
  } else {
    return float_pow(a, b);
  }
}

// NaN-propagating, as torch.maximum / torch.minimum.
template <typename T> HWARO_HOST_DEVICE inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <typename T> HWARO_HOST_DEVICE inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

template <typename T> HWARO_HOST_DEVICE inline bool eq(T a, T b) { return a == b; }
template <typename T> HWARO_HOST_DEVICE inline bool ne(T a, T b) { return a != b; }
template <typename T> HWARO_HOST_DEVICE inline bool lt(T a, T b) { return a < b; }
template <typename T> HWARO_HOST_DEVICE inline bool le(T a, T b) { return a <= b; }
template <typename T> HWARO_HOST_DEVICE inline bool gt(T a, T b) { return a > b; }
template <typename T> HWARO_HOST_DEVICE inline bool ge(T a, T b) { return a >= b; }

template <typename T> HWARO_HOST_DEVICE inline bool logical_and(T a, T b) { return (a != T(0)) && (b != T(0)); }
template <typename T> HWARO_HOST_DEVICE inline bool logical_or(T a, T b) { return (a != T(0)) || (b != T(0)); }
template <typename T> HWARO_HOST_DEVICE inline bool logical_xor(T a, T b) { return (a != T(0)) != (b != T(0)); }

}  // namespace hwaro::kernels
