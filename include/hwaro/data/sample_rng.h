#pragma once
// Reproducible per-sample randomness for transforms. A random transform must not
// depend on which worker thread runs it or in which order, so each sample gets its
// own generator derived from (loader seed, epoch, sample index). The DataLoader
// publishes seed and epoch to the thread that calls Dataset::get() (a thread-local
// SampleContext); outside a loader they are 0.
#include <cstdint>

namespace hwaro::data {

// A small counter-free generator (SplitMix64): fast, and its sequence is fixed by the
// algorithm, unlike the standard library's distributions.
class SampleRng {
 public:
  explicit SampleRng(std::uint64_t seed) : state_(seed) {}
  // Mixes the three into one seed; different (seed, epoch, index) give unrelated streams.
  static SampleRng for_sample(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index);

  std::uint64_t next_u64();
  // Uniform on [0, 1).
  double uniform();
  // Uniform integer in [0, bound); bound > 0.
  std::uint64_t below(std::uint64_t bound);

 private:
  std::uint64_t state_;
};

// What the loader tells the calling thread about the epoch it is loading.
struct SampleContext {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
};

// The calling thread's context (a thread-local).
SampleContext current_sample_context();
// Sets the calling thread's context until the guard goes out of scope.
class SampleContextGuard {
 public:
  explicit SampleContextGuard(SampleContext context);
  ~SampleContextGuard();
  SampleContextGuard(const SampleContextGuard&) = delete;
  SampleContextGuard& operator=(const SampleContextGuard&) = delete;

 private:
  SampleContext previous_;
};

}  // namespace hwaro::data
