#pragma once
// cast_value: one element from one dtype's C++ type to another's, as PyTorch
// casts: to bool is "not zero", 16-bit floats go through float.
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

template <typename To, typename From> HWARO_HOST_DEVICE inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_like_v<From>) {
    return cast_value<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_half_like_v<To>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace hwaro::kernels
