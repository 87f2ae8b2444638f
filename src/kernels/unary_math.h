#pragma once
// Scalar bodies of the unary elementwise ops, shared by the CPU loops and the CUDA
// kernels. Each takes and returns the compute type (kernels::compute_t: float for
// the 16-bit floats), so Half and BFloat16 are computed in float.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "hwaro/macros.h"

namespace hwaro::kernels {

template <typename T> HWARO_HOST_DEVICE inline T neg(T x) { return static_cast<T>(-x); }

template <typename T> HWARO_HOST_DEVICE inline T abs(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return x;  // uint8 and bool: already non-negative
  } else {
    return x < T(0) ? static_cast<T>(-x) : x;
  }
}

template <typename T> HWARO_HOST_DEVICE inline T exp(T x) { return std::exp(x); }
template <typename T> HWARO_HOST_DEVICE inline T log(T x) { return std::log(x); }
// e^x - 1 and log(1 + x) without the cancellation of the plain forms near 0 (where exp(x) - 1
// keeps only the last bits of exp's result, and 1 + x rounds the small x away).
template <typename T> HWARO_HOST_DEVICE inline T expm1(T x) { return std::expm1(x); }
template <typename T> HWARO_HOST_DEVICE inline T log1p(T x) { return std::log1p(x); }
template <typename T> HWARO_HOST_DEVICE inline T sqrt(T x) { return std::sqrt(x); }
template <typename T> HWARO_HOST_DEVICE inline T rsqrt(T x) { return T(1) / std::sqrt(x); }
template <typename T> HWARO_HOST_DEVICE inline T tanh(T x) { return std::tanh(x); }

// 1 / (1 + e^-x) overflows e^-x for large negative x; the form below only ever
// exponentiates a non-positive number, so it is finite and exact at both tails.
template <typename T> HWARO_HOST_DEVICE inline T sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

// NaN stays NaN (NaN < 0 is false, so NaN is returned as is).
template <typename T> HWARO_HOST_DEVICE inline T relu(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return x;  // uint8 and bool (nvcc warns on the comparison with zero)
  } else {
    return x < T(0) ? T(0) : x;
  }
}

template <typename T> HWARO_HOST_DEVICE inline T silu(T x) { return x * sigmoid(x); }

// gelu(x) = x * Phi(x), Phi the standard normal CDF, through erf.
template <typename T> HWARO_HOST_DEVICE inline T gelu_erf(T x) {
  constexpr T kInvSqrt2 = T(0.70710678118654752440);
  return T(0.5) * x * (T(1) + std::erf(x * kInvSqrt2));
}

// PyTorch's approximate='tanh': 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <typename T> HWARO_HOST_DEVICE inline T gelu_tanh(T x) {
  constexpr T kSqrt2OverPi = T(0.79788456080286535588);
  constexpr T kCoeff = T(0.044715);
  return T(0.5) * x * (T(1) + std::tanh(kSqrt2OverPi * (x + kCoeff * x * x * x)));
}

// min then max, as torch.clamp: with lo > hi every element becomes hi; NaN stays NaN.
template <typename T> HWARO_HOST_DEVICE inline T clamp(T x, bool has_lo, T lo, bool has_hi, T hi) {
  if (has_lo && x < lo) x = lo;
  if (has_hi && x > hi) x = hi;
  return x;
}

// Integer power by squaring. Negative exponents follow PyTorch's integer rule:
// 1 and -1 keep their magnitude, every other base gives 0.
template <typename T> HWARO_HOST_DEVICE inline T int_pow(T base, std::int64_t exponent) {
  if (exponent < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
    }
    return T(0);
  }
  T result = T(1);
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<T>(result * base);
    exponent >>= 1;
    if (exponent > 0) base = static_cast<T>(base * base);
  }
  return result;
}

// Floating power; the common exponents avoid the general pow (faster, and exact for squares).
template <typename T> HWARO_HOST_DEVICE inline T float_pow(T base, T exponent) {
  if (exponent == T(2)) return base * base;
  if (exponent == T(1)) return base;
  if (exponent == T(0.5)) return std::sqrt(base);
  return std::pow(base, exponent);
}

}  // namespace hwaro::kernels
