// SampleRng (SplitMix64) and the thread-local SampleContext the loader publishes.
#include "hwaro/data/sample_rng.h"

namespace hwaro::data {

namespace {
thread_local SampleContext t_context{};

std::uint64_t mix(std::uint64_t z) {  // SplitMix64's finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

SampleRng SampleRng::for_sample(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) {
  return SampleRng(mix(mix(mix(seed) ^ epoch) ^ index));
}

std::uint64_t SampleRng::next_u64() {
  state_ += 0x9E3779B97F4A7C15ULL;
  return mix(state_);
}

double SampleRng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t SampleRng::below(std::uint64_t bound) {
  // The modulo bias is below bound / 2^64: nothing for data-set sizes.
  return next_u64() % bound;
}

SampleContext current_sample_context() { return t_context; }

SampleContextGuard::SampleContextGuard(SampleContext context) : previous_(t_context) { t_context = context; }
SampleContextGuard::~SampleContextGuard() { t_context = previous_; }

}  // namespace hwaro::data
