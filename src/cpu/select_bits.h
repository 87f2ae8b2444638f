#pragma once
// c ? a : b without a branch, for the CPU kernels' inner loops.
#include <bit>
#include <cstdint>
#include <type_traits>

namespace hwaro::cpu {

// The unsigned integer of T's size, for a bitwise select.
template <typename T>
using bits_of = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

// c ? a : b as a mask on the bits. GCC keeps a branch for a plain ?: in where's and max
// pooling's loops, and on random data (ReLU's mask, the winner of a pooling window) half of
// those branches mispredict; this has none, so a contiguous loop of it vectorises. The bits are
// copied as they are (NaN payloads, -0.0).
template <typename T> T select_bits(bool c, T a, T b) {
  using U = bits_of<T>;
  static_assert(sizeof(U) == sizeof(T), "select_bits: no unsigned integer of this size");
  const U mask = static_cast<U>(-static_cast<U>(c));
  return std::bit_cast<T>(static_cast<U>((std::bit_cast<U>(a) & mask) | (std::bit_cast<U>(b) & static_cast<U>(~mask))));
}

}  // namespace hwaro::cpu
