// SampleRng (SplitMix64) and the thread-local SampleContext the loader publishes.
#include "hwaro/data/sample_rng.h"

#include "core/splitmix64.h"

namespace hwaro::data {

namespace {
thread_local SampleContext t_context{};
}  // namespace

SampleRng SampleRng::for_sample(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) {
  return SampleRng(splitmix64_mix(splitmix64_mix(splitmix64_mix(seed) ^ epoch) ^ index));
}

std::uint64_t SampleRng::next_u64() {
  state_ += kSplitMix64Gamma;
  return splitmix64_mix(state_);
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
