// rand, randn, randint, randperm and the generators: reproducible from a seed, independent of the
// thread count and the device, and distributed as documented.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/philox.h"
#include "ops/op_helpers.h"
#include "support/test_support.h"

namespace hw = hwaro;

namespace {

struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
};

Moments moments_of(const std::vector<double>& v) {
  Moments m;
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size() - 1);
  return m;
}

constexpr std::int64_t kSamples = 1000000;

}  // namespace

TEST(Random, PhiloxKnownAnswer) {
  // Random123's known-answer vector for philox4x32_10 with counter 0 and key 0.
  const hw::kernels::Philox4 r = hw::kernels::philox4x32_10(0, 0);
  EXPECT_EQ(r.w[0], 0x6627e8d5u);
  EXPECT_EQ(r.w[1], 0xe169c58du);
  EXPECT_EQ(r.w[2], 0xbc57ac4cu);
  EXPECT_EQ(r.w[3], 0x9b00dbd8u);
}

TEST(Random, SameSeedSameNumbers) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  for (hw::DType dtype : {hw::kFloat32, hw::kFloat64, hw::kFloat16, hw::kBFloat16}) {
    hw::Generator a(seed), b(seed);
    EXPECT_EQ(hw::test::values_of(hw::rand({257}, {.dtype = dtype}, &a)),
              hw::test::values_of(hw::rand({257}, {.dtype = dtype}, &b)));
    EXPECT_EQ(hw::test::values_of(hw::randn({3, 5}, {.dtype = dtype}, &a)),
              hw::test::values_of(hw::randn({3, 5}, {.dtype = dtype}, &b)));
  }
  hw::Generator a(seed), b(seed);
  EXPECT_EQ(hw::test::values_of(hw::randint(-5, 5, {100}, {}, &a)), hw::test::values_of(hw::randint(-5, 5, {100}, {}, &b)));
  EXPECT_EQ(hw::test::values_of(hw::randperm(50, {}, &a)), hw::test::values_of(hw::randperm(50, {}, &b)));
}

TEST(Random, ManualSeedResetsTheDefaultGenerator) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::manual_seed(seed);
  const auto first = hw::test::values_of(hw::randn({64}));
  const auto second = hw::test::values_of(hw::randn({64}));
  EXPECT_NE(first, second);  // the generator moved on
  hw::manual_seed(seed);
  EXPECT_EQ(hw::test::values_of(hw::randn({64})), first);
  EXPECT_EQ(hw::default_generator().seed(), seed);
}

TEST(Random, DifferentSeedsDiffer) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator a(seed), b(seed + 1);
  const auto x = hw::test::values_of(hw::rand({1000}, {}, &a));
  const auto y = hw::test::values_of(hw::rand({1000}, {}, &b));
  std::int64_t equal = 0;
  for (std::size_t i = 0; i < x.size(); ++i) equal += x[i] == y[i];
  EXPECT_LT(equal, 5);
}

TEST(Random, DrawsReserveCountersFromTheGenerator) {
  hw::Generator g(1);
  hw::rand({10}, {}, &g);  // four float32 values per counter
  EXPECT_EQ(g.offset(), 3u);
  hw::rand({10}, {.dtype = hw::kFloat64}, &g);  // two float64 values per counter
  EXPECT_EQ(g.offset(), 8u);
  hw::rand({0}, {}, &g);
  EXPECT_EQ(g.offset(), 8u);
  // A draw continues where the last one stopped: two draws of 8 equal one of 16.
  hw::Generator h(5), k(5);
  auto joined = hw::test::values_of(hw::rand({8}, {}, &h));
  const auto tail = hw::test::values_of(hw::rand({8}, {}, &h));
  joined.insert(joined.end(), tail.begin(), tail.end());
  EXPECT_EQ(joined, hw::test::values_of(hw::rand({16}, {}, &k)));
}

TEST(Random, UniformMomentsAndRange) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator g(seed);
  // 16-bit floats draw as many bits as they hold (11 and 8), which shifts the mean and variance
  // of the grid k / 2^bits slightly below those of U[0, 1).
  const std::pair<hw::DType, int> cases[] = {{hw::kFloat32, 24}, {hw::kFloat64, 53}, {hw::kFloat16, 11}, {hw::kBFloat16, 8}};
  for (const auto& [dtype, bits] : cases) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    const hw::Tensor t = hw::rand({kSamples}, {.dtype = dtype}, &g);
    EXPECT_EQ(t.dtype(), dtype);
    const Moments m = moments_of(hw::test::values_of(t));
    const double step = std::ldexp(1.0, -bits);
    const double mean = 0.5 - step / 2, var = (1.0 - step * step) / 12.0;
    // Six standard errors: sd(mean) = 0.289 / 1000, sd(var) ~ 0.075 / 1000.
    EXPECT_NEAR(m.mean, mean, 6 * 2.9e-4);
    EXPECT_NEAR(m.var, var, 6 * 7.5e-5);
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
  }
}

TEST(Random, NormalMomentsAndShape) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator g(seed);
  for (hw::DType dtype : {hw::kFloat32, hw::kFloat64, hw::kFloat16, hw::kBFloat16}) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    const auto v = hw::test::values_of(hw::randn({kSamples}, {.dtype = dtype}, &g));
    const Moments m = moments_of(v);
    const double rounding = dtype == hw::kBFloat16 ? 5e-3 : 0.0;  // bf16's 8 bits widen the spread a little
    EXPECT_NEAR(m.mean, 0.0, 6e-3);
    EXPECT_NEAR(std::sqrt(m.var), 1.0, 4.5e-3 + rounding);
    // Within one standard deviation: 68.27%; sd of the fraction 0.047%.
    const auto inside = std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x) < 1.0; });
    EXPECT_NEAR(static_cast<double>(inside) / kSamples, 0.6827, 3e-3 + rounding);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
  }
}

TEST(Random, RandIntRangeAndCoverage) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator g(seed);
  for (hw::DType dtype : {hw::kInt64, hw::kInt32, hw::kUInt8, hw::kFloat32, hw::kFloat64}) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    const std::int64_t low = dtype == hw::kUInt8 ? 3 : -7, high = 13;
    const hw::Tensor t = hw::randint(low, high, {10000}, {.dtype = dtype}, &g);
    EXPECT_EQ(t.dtype(), dtype);
    std::vector<int> counts(static_cast<std::size_t>(high - low), 0);
    for (double x : hw::test::values_of(t)) {
      ASSERT_EQ(x, std::floor(x));
      ASSERT_GE(x, low);
      ASSERT_LT(x, high);
      ++counts[static_cast<std::size_t>(x - static_cast<double>(low))];
    }
    // Every value turns up, none wildly more often than 1/20 of the time (expected 500 / 1000).
    for (int c : counts) {
      EXPECT_GT(c, 0);
      EXPECT_LT(c, 10000 / static_cast<int>(counts.size()) * 3 / 2);
    }
  }
  EXPECT_EQ(hw::randint(0, 10, {2, 3}).dtype(), hw::kInt64);
  const auto bools = hw::test::values_of(hw::randint(0, 2, {100}, {.dtype = hw::kBool}, &g));
  EXPECT_TRUE(std::count(bools.begin(), bools.end(), 1.0) > 10 && std::count(bools.begin(), bools.end(), 0.0) > 10);
}

TEST(Random, RandIntWideRange) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator g(seed);
  const std::int64_t low = -(std::int64_t{1} << 40), high = std::int64_t{1} << 40;
  const auto v = hw::randint(low, high, {10000}, {}, &g).to_vector<std::int64_t>();
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [&](std::int64_t x) { return x >= low && x < high; }));
  // Both halves and values far beyond 32 bits appear.
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](std::int64_t x) { return x < -(std::int64_t{1} << 38); }), 1000);
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](std::int64_t x) { return x > (std::int64_t{1} << 38); }), 1000);
  EXPECT_EQ(g.offset(), 5000u);  // two 64-bit values per counter
}

TEST(Random, RandIntErrors) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randint(5, 5, {3}); }, "expected low < high, but got low=5 >= high=5"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randint(0, 300, {3}, {.dtype = hw::kUInt8}); },
                                               "[0, 300) does not fit in uint8"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randint(-1, 2, {3}, {.dtype = hw::kBool}); },
                                               "does not fit in bool"));
}

TEST(Random, RandPermIsAPermutation) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator g(seed);
  for (std::int64_t n : {0, 1, 2, 7, 1000}) {
    for (hw::DType dtype : {hw::kInt64, hw::kInt32, hw::kFloat32}) {
      const hw::Tensor p = hw::randperm(n, {.dtype = dtype}, &g);
      EXPECT_EQ(p.dtype(), dtype);
      ASSERT_EQ(p.sizes(), hw::IntArrayRef({n}));
      auto v = hw::test::values_of(p);
      std::sort(v.begin(), v.end());
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], static_cast<double>(i));
    }
  }
  // Shuffled, not the identity; and every position sees many values over repeated draws.
  const auto v = hw::randperm(1000, {}, &g).to_vector<std::int64_t>();
  std::int64_t fixed = 0;
  for (std::int64_t i = 0; i < 1000; ++i) fixed += v[static_cast<std::size_t>(i)] == i;
  EXPECT_LT(fixed, 10);
  std::vector<int> first_counts(4, 0);
  for (int rep = 0; rep < 4000; ++rep) ++first_counts[static_cast<std::size_t>(hw::randperm(4, {}, &g).to_vector<std::int64_t>()[0])];
  for (int c : first_counts) EXPECT_NEAR(c, 1000, 150);
}

TEST(Random, RandPermErrors) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randperm(-1); }, "n must be non-negative, got -1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randperm(3, {.dtype = hw::kBool}); }, "bool cannot hold"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randperm(3000, {.dtype = hw::kFloat16}); },
                                               "n = 3000 is too large for float16"));
  EXPECT_NO_THROW(hw::randperm(2049, {.dtype = hw::kFloat16}));
}

TEST(Random, FloatOnlyForRandAndRandn) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::rand({2}, {.dtype = hw::kInt64}); },
                                               "rand: expected a floating-point dtype"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::randn({2}, {.dtype = hw::kBool}); },
                                               "randn: expected a floating-point dtype"));
}

TEST(Random, IndependentOfTheThreadCount) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  const int before = hw::get_num_threads();
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2}) {
    hw::set_num_threads(threads);
    hw::Generator g(seed);
    std::vector<double> all;
    for (hw::DType dtype : {hw::kFloat32, hw::kFloat64, hw::kFloat16}) {
      for (const hw::Tensor& t : {hw::rand({kSamples + 3}, {.dtype = dtype}, &g), hw::randn({kSamples + 1}, {.dtype = dtype}, &g)}) {
        const auto v = hw::test::values_of(t);
        all.insert(all.end(), v.begin(), v.end());
      }
    }
    const auto ints = hw::test::values_of(hw::randint(0, 1000, {kSamples}, {}, &g));
    all.insert(all.end(), ints.begin(), ints.end());
    runs.push_back(std::move(all));
  }
  hw::set_num_threads(before);
  EXPECT_TRUE(runs[0] == runs[1]);
}

TEST(Random, StridedOutputsGetElementsInRowMajorOrder) {
  // The kernel fills a transposed view so that its row-major element i is element i of a draw.
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Tensor base = hw::zeros({4, 6});
  hw::Tensor view = base.t();
  ASSERT_FALSE(view.is_contiguous());
  hw::KernelArgs args;
  args.tensors[0] = hw::ops::view_of(view);
  args.num_tensors = 1;
  args.ints[0] = static_cast<std::int64_t>(seed);
  args.ints[1] = 0;
  args.scalars[1] = 1.0;
  hw::ops::launch(hw::OpId::RandUniform, hw::kFloat32, view.device(), args);
  hw::Generator g(seed);
  EXPECT_EQ(hw::test::values_of(view), hw::test::values_of(hw::rand({6, 4}, {}, &g)));
}

TEST(Random, SameNumbersOnAnotherDevice) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  hw::Generator a(seed), b(seed);
  const hw::Tensor there = hw::randn({100}, {.device = hw::test::other_device()}, &a);
  EXPECT_EQ(there.device(), hw::test::other_device());
  EXPECT_EQ(hw::test::values_of(there), hw::test::values_of(hw::randn({100}, {}, &b)));
}

TEST(Random, OptionsAndLikeForms) {
  const hw::Tensor r = hw::rand({2, 3}, {.requires_grad = true});
  EXPECT_TRUE(r.requires_grad());
  EXPECT_EQ(r.sizes(), hw::IntArrayRef({2, 3}));
  EXPECT_EQ(hw::randn({}).dim(), 0);
  EXPECT_EQ(hw::rand({0, 3}).numel(), 0);
  const hw::Tensor like = hw::rand_like(hw::zeros({4, 5}, {.dtype = hw::kFloat64}));
  EXPECT_EQ(like.dtype(), hw::kFloat64);
  EXPECT_EQ(like.sizes(), hw::IntArrayRef({4, 5}));
  EXPECT_EQ(hw::randn_like(hw::zeros({3}, {.dtype = hw::kBFloat16})).dtype(), hw::kBFloat16);
  // pin_memory: page-locked where a GPU is (the test backend's pinning is not enabled in this
  // binary), else pageable memory with a warning; either way filled with draws in [0, 1).
  const hw::Tensor pinned = hw::rand({4}, {.pin_memory = true});
  EXPECT_EQ(pinned.is_pinned(), hw::cuda::is_available());
  for (double v : hw::test::values_of(pinned)) EXPECT_TRUE(v >= 0.0 && v < 1.0) << v;
}
