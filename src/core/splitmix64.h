#pragma once
// SplitMix64 (Steele, Lea and Flood): its increment and its finaliser, a bijective mix of 64 bits
// in which every input bit reaches every output bit. hwaro derives unrelated seeds from counters
// with it: the data loader's per-sample generators, DataParallel's per-replica generators.
#include <cstdint>

namespace hwaro {

inline constexpr std::uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

inline constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace hwaro
