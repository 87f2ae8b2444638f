#pragma once
// Generator: a seeded source of random numbers. Counter-based (Philox4x32-10):
// element i of a draw depends only on (seed, offset + i), so the numbers are
// the same whatever the number of threads, and the same on the CPU and the GPU.
#include <atomic>
#include <cstdint>

namespace hwaro {

class Generator {
 public:
  static constexpr std::uint64_t kDefaultSeed = 67280421310721ULL;  // PyTorch's default seed

  explicit Generator(std::uint64_t seed = kDefaultSeed) : seed_(seed) {}
  Generator(const Generator& other) : seed_(other.seed_), offset_(other.offset_.load()) {}

  void manual_seed(std::uint64_t seed) {
    seed_ = seed;
    offset_.store(0);
  }
  std::uint64_t seed() const { return seed_; }
  std::uint64_t offset() const { return offset_.load(); }
  // Reserves `count` counters for one draw and returns the first; thread-safe.
  std::uint64_t take(std::uint64_t count) { return offset_.fetch_add(count); }

 private:
  std::uint64_t seed_;
  std::atomic<std::uint64_t> offset_{0};
};

// The generator used when none is passed.
Generator& default_generator();
// Seeds the default generator (torch.manual_seed).
void manual_seed(std::uint64_t seed);

}  // namespace hwaro
