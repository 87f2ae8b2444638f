#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11): a counter-based generator. One call maps (counter, key) to four
// independent 32-bit words, so element i of a draw can be computed by whichever
// thread (or GPU lane) owns it, and the numbers never depend on the thread count.
//
// Layout of a draw of n elements starting at generator offset `offset`:
//   narrow draws (32 bits per element): element i uses counter offset + i / 4, word i % 4;
//   wide draws (64 bits per element: float64, integer ranges past 2^32):
//                                        element i uses counter offset + i / 2, words 2(i%2), 2(i%2)+1.
// A draw reserves counters_for(n, values_per_counter(wide)) counters of its generator.
#include <cmath>
#include <cstdint>

#include "hwaro/macros.h"

namespace hwaro::kernels {

struct Philox4 {
  std::uint32_t w[4];
};

namespace detail {
HWARO_HOST_DEVICE inline std::uint32_t mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t* hi) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  *hi = static_cast<std::uint32_t>(product >> 32);
  return static_cast<std::uint32_t>(product);
}
}  // namespace detail

// The 128-bit counter is (counter, 0); the 64-bit key is the seed.
HWARO_HOST_DEVICE inline Philox4 philox4x32_10(std::uint64_t counter, std::uint64_t seed) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32);
  std::uint32_t c2 = 0, c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, hi1;
    const std::uint32_t lo0 = detail::mulhilo(kM0, c0, &hi0);
    const std::uint32_t lo1 = detail::mulhilo(kM1, c2, &hi1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {{c0, c1, c2, c3}};
}

HWARO_HOST_DEVICE constexpr int values_per_counter(bool wide) { return wide ? 2 : 4; }
HWARO_HOST_DEVICE constexpr std::uint64_t counters_for(std::uint64_t n, int per_counter) {
  return (n + static_cast<std::uint64_t>(per_counter) - 1) / static_cast<std::uint64_t>(per_counter);
}
HWARO_HOST_DEVICE inline std::uint64_t join64(std::uint32_t hi, std::uint32_t lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// Uniform on [0, 1) with `bits` bits of precision (bits <= 24), exactly representable in a
// float whose significand has at least `bits` bits, so rounding to the storage type cannot give 1.
HWARO_HOST_DEVICE inline float uniform_float(std::uint32_t x, int bits = 24) {
  return static_cast<float>(x >> (32 - bits)) * (1.0f / static_cast<float>(1u << bits));  // exact: a power of two
}
// Uniform on [0, 1) with 53 bits.
HWARO_HOST_DEVICE inline double uniform_double(std::uint64_t x) {
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}
// Uniform on (0, 1]: safe to take the log of.
HWARO_HOST_DEVICE inline float uniform_float_open0(std::uint32_t x) {
  return static_cast<float>((x >> 8) + 1u) * 0x1.0p-24f;
}
HWARO_HOST_DEVICE inline double uniform_double_open0(std::uint64_t x) {
  return static_cast<double>((x >> 11) + 1u) * 0x1.0p-53;
}

// Box-Muller: two independent standard normals from u1 in (0, 1] and u2 in [0, 1).
template <typename T> HWARO_HOST_DEVICE inline void box_muller(T u1, T u2, T* z0, T* z1) {
  constexpr T kTwoPi = static_cast<T>(6.283185307179586476925286766559);
  const T radius = std::sqrt(static_cast<T>(-2) * std::log(u1));
  const T angle = kTwoPi * u2;
  *z0 = radius * std::cos(angle);
  *z1 = radius * std::sin(angle);
}

// Integers in [low, high) need 64 random bits per element when the range exceeds 2^32.
HWARO_HOST_DEVICE inline bool randint_is_wide(std::int64_t low, std::int64_t high) {
  return static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low) > (std::uint64_t{1} << 32);
}

}  // namespace hwaro::kernels
