#pragma once
// One element of RandUniform, RandNormal and RandInt from the Philox words of its counter
// (kernels/philox.h gives the layout), shared by the CPU loop and the CUDA kernel so that both
// produce the same numbers for a seed and offset.
#include <cstdint>
#include <type_traits>

#include "hwaro/macros.h"
#include "kernels/cast.h"
#include "kernels/philox.h"

namespace hwaro::kernels {

// Random bits of uniforms for T: its significand's precision, so that [0, 1) stays [0, 1) in T.
template <typename T> HWARO_HOST_DEVICE constexpr int uniform_bits() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return 24;
}

// Whether a draw of T takes 64 bits per element (two per counter) rather than 32 (four).
template <typename T> HWARO_HOST_DEVICE constexpr bool is_wide_float() { return std::is_same_v<T, double>; }

// U[low, low + range) for element `lane` of a counter.
template <typename T>
HWARO_HOST_DEVICE inline T uniform_element(const Philox4& w, int lane, compute_t<T> low, compute_t<T> range) {
  if constexpr (is_wide_float<T>()) {
    return low + range * uniform_double(join64(w.w[2 * lane], w.w[2 * lane + 1]));
  } else {
    return cast_value<T>(low + range * uniform_float(w.w[lane], uniform_bits<T>()));
  }
}

// N(mean, std_dev^2): each Box-Muller pair uses two words (two pairs of words for float64), so
// lanes (0, 1) and (2, 3) of a counter are the pairs' two outputs.
template <typename T>
HWARO_HOST_DEVICE inline T normal_element(const Philox4& w, int lane, compute_t<T> mean, compute_t<T> std_dev) {
  using C = compute_t<T>;
  C z0, z1;
  if constexpr (is_wide_float<T>()) {
    box_muller(uniform_double_open0(join64(w.w[0], w.w[1])), uniform_double(join64(w.w[2], w.w[3])), &z0, &z1);
  } else {
    const int pair = lane & ~1;
    box_muller(uniform_float_open0(w.w[pair]), uniform_float(w.w[pair + 1]), &z0, &z1);
  }
  return cast_value<T>(mean + std_dev * ((lane & 1) == 0 ? z0 : z1));
}

// An integer in [low, low + range), uniform by modulo (bias below 2^-32 of the range); `wide`
// is randint_is_wide(low, high).
template <typename T>
HWARO_HOST_DEVICE inline T randint_element(const Philox4& w, int lane, bool wide, std::int64_t low, std::uint64_t range) {
  const std::uint64_t bits = wide ? join64(w.w[2 * lane], w.w[2 * lane + 1]) : w.w[lane];
  const auto value = static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + bits % range);
  return cast_value<T>(value);
}

}  // namespace hwaro::kernels
