// Comparisons, logical ops, where, masked_fill and isclose / allclose / equal against references
// computed in the test on fresh random inputs, with broadcasting, non-contiguous, zero-size and
// one-element layouts, several dtypes, and every error path.
#include <cmath>
#include <functional>
#include <limits>

#include "support/test_support.h"

namespace hw = hwaro;
using hw::DType;
using hw::Tensor;

namespace {

struct Case {
  std::vector<std::int64_t> a, b, out;
  bool non_contiguous;
};
const std::vector<Case> kCases = {
    {{3, 5}, {3, 5}, {3, 5}, false},   {{4, 6}, {4, 6}, {4, 6}, true}, {{3, 1, 4}, {2, 4}, {3, 2, 4}, false},
    {{3, 1, 4}, {2, 4}, {3, 2, 4}, true}, {{2, 4}, {}, {2, 4}, false}, {{0, 3}, {3}, {0, 3}, false},
    {{}, {}, {}, false},               {{1}, {1}, {1}, false},         {{70000}, {70000}, {70000}, false},
};

Tensor input(const std::vector<std::int64_t>& sizes, DType dt, std::mt19937_64& rng, bool non_contiguous) {
  // A narrow integer range makes equal pairs common, so eq/le/ge see both outcomes.
  Tensor t = hw::test::random_tensor(sizes, dt, rng, -2, 2);
  if (hw::is_floating_point(dt)) t = (t * 2).to(hw::kInt64).to(dt) / 2;  // halves: exact in every dtype
  return non_contiguous ? hw::test::non_contiguous_copy(t) : t;
}

using Fn = std::function<Tensor(const Tensor&, const Tensor&)>;
using Ref = std::function<bool(double, double)>;

void check_predicate(const char* name, const Fn& fn, const Ref& ref, const std::vector<DType>& dtypes) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << name << ", seed " << seed);
  std::mt19937_64 rng(seed);
  for (DType dt : dtypes) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(::testing::Message() << dt << ", shapes " << hw::IntArrayRef(c.a) << " and " << hw::IntArrayRef(c.b));
      const Tensor a = input(c.a, dt, rng, c.non_contiguous);
      const Tensor b = input(c.b, dt, rng, c.non_contiguous);
      const std::vector<double> va = hw::test::values_of(a.expand(c.out)), vb = hw::test::values_of(b.expand(c.out));
      std::vector<double> expected(va.size());
      for (std::size_t i = 0; i < va.size(); ++i) expected[i] = ref(va[i], vb[i]) ? 1.0 : 0.0;
      const Tensor y = fn(a, b);
      EXPECT_EQ(y.dtype(), hw::kBool);
      EXPECT_EQ(y.sizes(), hw::IntArrayRef(c.out));
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, 0, 0));
    }
  }
}

const std::vector<DType> kTypes = {hw::kFloat32, hw::kFloat64, hw::kFloat16, hw::kBFloat16,
                                   hw::kInt32,   hw::kInt64,   hw::kUInt8,   hw::kBool};

}  // namespace

TEST(Comparison, TensorTensor) {
  check_predicate("eq", [](const Tensor& a, const Tensor& b) { return a == b; }, std::equal_to<double>(), kTypes);
  check_predicate("ne", [](const Tensor& a, const Tensor& b) { return hw::ne(a, b); }, std::not_equal_to<double>(),
                  kTypes);
  check_predicate("lt", [](const Tensor& a, const Tensor& b) { return a < b; }, std::less<double>(), kTypes);
  check_predicate("le", [](const Tensor& a, const Tensor& b) { return a.le(b); }, std::less_equal<double>(), kTypes);
  check_predicate("gt", [](const Tensor& a, const Tensor& b) { return a > b; }, std::greater<double>(), kTypes);
  check_predicate("ge", [](const Tensor& a, const Tensor& b) { return hw::ge(a, b); }, std::greater_equal<double>(),
                  kTypes);
  check_predicate("!=", [](const Tensor& a, const Tensor& b) { return a != b; }, std::not_equal_to<double>(), kTypes);
  check_predicate("<=", [](const Tensor& a, const Tensor& b) { return a <= b; }, std::less_equal<double>(), kTypes);
  check_predicate(">=", [](const Tensor& a, const Tensor& b) { return a >= b; }, std::greater_equal<double>(),
                  kTypes);
}

TEST(Comparison, Logical) {
  check_predicate("logical_and", [](const Tensor& a, const Tensor& b) { return a && b; },
                  [](double x, double y) { return x != 0 && y != 0; }, kTypes);
  check_predicate("logical_or", [](const Tensor& a, const Tensor& b) { return a || b; },
                  [](double x, double y) { return x != 0 || y != 0; }, kTypes);
  check_predicate("logical_xor", [](const Tensor& a, const Tensor& b) { return hw::logical_xor(a, b); },
                  [](double x, double y) { return (x != 0) != (y != 0); }, kTypes);
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "logical_not, seed " << seed);
  std::mt19937_64 rng(seed);
  for (DType dt : kTypes) {
    for (const Case& c : kCases) {
      const Tensor a = input(c.a, dt, rng, c.non_contiguous);
      std::vector<double> expected = hw::test::values_of(a);
      for (double& v : expected) v = v == 0 ? 1 : 0;
      const Tensor y = !a;
      EXPECT_EQ(y.dtype(), hw::kBool);
      EXPECT_EQ(y.sizes(), a.sizes());
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, 0, 0));
    }
  }
  // Mixed dtypes are compared after promotion.
  EXPECT_EQ((hw::tensor({0, 2}) && hw::tensor({0.5f, 0.f})).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(hw::tensor({1.5f, 0.f}).logical_or(hw::tensor({0, 0})).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(Comparison, Scalars) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (DType dt : {hw::kFloat32, hw::kInt32, hw::kInt64, hw::kBFloat16}) {
    const Tensor x = input({4, 5}, dt, rng, true);
    const std::vector<double> v = hw::test::values_of(x);
    auto expect = [&](const Tensor& y, const std::function<bool(double)>& f) {
      std::vector<double> e(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) e[i] = f(v[i]) ? 1 : 0;
      EXPECT_EQ(y.dtype(), hw::kBool);
      EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), e, 0, 0));
    };
    expect(x == 1, [](double d) { return d == 1; });
    expect(x != 1, [](double d) { return d != 1; });
    expect(x < 0.5, [](double d) { return d < 0.5; });  // an int tensor against 0.5 compares in float
    expect(x <= 0, [](double d) { return d <= 0; });
    expect(x > -0.5, [](double d) { return d > -0.5; });
    expect(x >= 1, [](double d) { return d >= 1; });
    expect(x.eq(0.5), [](double d) { return d == 0.5; });
  }
}

TEST(Comparison, NanIsUnequal) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = hw::tensor({nan, 1.f});
  EXPECT_EQ((x == x).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((x != x).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((x < 2).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(Where, AllOverloads) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (DType dt : {hw::kFloat32, hw::kFloat64, hw::kFloat16, hw::kInt64, hw::kBool}) {
    SCOPED_TRACE(::testing::Message() << dt);
    // condition [3, 1, 4], a [2, 4] non-contiguous, b [3, 2, 1]: all three broadcast to [3, 2, 4].
    const Tensor cond = hw::test::random_tensor({3, 1, 4}, hw::kBool, rng);
    const Tensor a = hw::test::non_contiguous_copy(hw::test::random_tensor({2, 4}, dt, rng));
    const Tensor b = hw::test::random_tensor({3, 2, 1}, dt, rng);
    const std::vector<std::int64_t> out = {3, 2, 4};
    const std::vector<double> vc = hw::test::values_of(cond.expand(out)), va = hw::test::values_of(a.expand(out)),
                              vb = hw::test::values_of(b.expand(out));
    std::vector<double> e(vc.size()), e_scalar_a(vc.size()), e_scalar_b(vc.size());
    for (std::size_t i = 0; i < vc.size(); ++i) {
      e[i] = vc[i] != 0 ? va[i] : vb[i];
      e_scalar_a[i] = vc[i] != 0 ? 1.0 : vb[i];
      e_scalar_b[i] = vc[i] != 0 ? va[i] : 0.0;
    }
    const Tensor y = hw::where(cond, a, b);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.sizes(), hw::IntArrayRef(out));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), e, 0, 0));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(hw::where(cond, 1, b)), e_scalar_a, 0, 0));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(hw::where(cond, a, 0)), e_scalar_b, 0, 0));
  }
  // Promotion: int tensor against a float scalar gives float32; zero-size and 0-dim inputs.
  EXPECT_EQ(hw::where(hw::tensor({true, false}), hw::tensor({1, 2}), 0.5).to_vector<float>(),
            (std::vector<float>{1.f, 0.5f}));
  EXPECT_EQ(hw::where(hw::tensor({true, false}), hw::tensor({1, 2}), hw::tensor({1.5f, 2.5f})).dtype(), hw::kFloat32);
  EXPECT_EQ(hw::where(hw::zeros({0, 3}, {.dtype = hw::kBool}), hw::zeros({3}), 1).sizes(), hw::IntArrayRef({0, 3}));
  EXPECT_EQ(hw::where(hw::scalar_tensor(true), 2.f, hw::scalar_tensor(3.f)).item<float>(), 2.f);
}

TEST(Where, Errors) {
  const Tensor x = hw::zeros({3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::where(x, x, x); },
                                               "where: expected condition to be a boolean tensor, but got a tensor "
                                               "with dtype float32"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::where(x > 0, x, hw::zeros({4})); }, "where: shapes"));
}

TEST(MaskedFill, MatchesReference) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (DType dt : {hw::kFloat32, hw::kBFloat16, hw::kInt32, hw::kInt64}) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor x = hw::test::non_contiguous_copy(hw::test::random_tensor({3, 2, 4}, dt, rng));
    const Tensor mask = hw::test::random_tensor({2, 1}, hw::kBool, rng);  // broadcast to x
    const std::vector<double> vx = hw::test::values_of(x), vm = hw::test::values_of(mask.expand({3, 2, 4}));
    std::vector<double> e(vx.size());
    for (std::size_t i = 0; i < vx.size(); ++i) e[i] = vm[i] != 0 ? -7.0 : vx[i];
    const Tensor y = x.masked_fill(mask, -7);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), e, 0, 0));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(x), vx, 0, 0));  // out of place leaves x alone
    Tensor z = x;
    const auto version = z.version();
    z.masked_fill_(mask, -7);
    EXPECT_GT(z.version(), version);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(z), e, 0, 0));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(hw::masked_fill(hw::zeros({0, 4}), hw::zeros({4}, {.dtype = hw::kBool}), 1)), {}, 0, 0));
  }
  // A float value is cast to an integer tensor's dtype, as PyTorch.
  EXPECT_EQ(hw::tensor({1, 2}).masked_fill(hw::tensor({true, false}), 2.5).to_vector<int>(), (std::vector<int>{2, 2}));
}

TEST(MaskedFill, Errors) {
  Tensor x = hw::zeros({2, 3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { x.masked_fill(hw::ones({2, 3}), 1); },
                                               "masked_fill: only boolean masks are supported, but got a mask with "
                                               "dtype float32"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { x.masked_fill_(hw::ones({3}, {.dtype = hw::kUInt8}), 1); },
                                               "masked_fill_: only boolean masks"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { x.masked_fill_(hw::ones({4, 2, 3}, {.dtype = hw::kBool}), 1); },
                                               "masked_fill_: mask of shape [4, 2, 3] cannot be broadcast to the shape "
                                               "[2, 3]"));
}

TEST(Closeness, IsCloseAllCloseEqual) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor a = hw::tensor({1.f, 1.f, inf, inf, nan, 0.f, 100.f});
  const Tensor b = hw::tensor({1.f, 1.5f, inf, -inf, nan, 1e-9f, 100.0005f});
  EXPECT_EQ(hw::isclose(a, b).to_vector<bool>(), (std::vector<bool>{true, false, true, false, false, true, true}));
  EXPECT_EQ(hw::isclose(hw::tensor({1.f}), hw::tensor({inf})).to_vector<bool>()[0], false);
  EXPECT_EQ(hw::isclose(a, b, 0.0, 0.6).to_vector<bool>()[1], true);
  EXPECT_EQ(hw::isclose(hw::tensor({10, 12}), hw::tensor({11, 15}), 0.0, 1.0).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  // Broadcast, and the all-elements form.
  EXPECT_TRUE(hw::allclose(hw::ones({2, 3}), hw::tensor({1.f, 1.f, 1.000001f})));
  EXPECT_FALSE(hw::allclose(hw::ones({2, 3}), hw::tensor({1.f, 1.f, 1.1f})));
  EXPECT_TRUE(hw::allclose(hw::zeros({0, 3}), hw::zeros({3})));
  // Random: a perturbation well inside the tolerance is close, well outside is not.
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const Tensor x = hw::test::random_tensor({50, 7}, hw::kFloat64, rng, 1, 2);
  EXPECT_TRUE(hw::allclose(x, x * (1 + 1e-7), 1e-5, 0));
  EXPECT_FALSE(hw::allclose(x, x * (1 + 1e-3), 1e-5, 0));

  EXPECT_TRUE(hw::equal(hw::tensor({1, 2, 3}), hw::tensor({1, 2, 3})));
  EXPECT_FALSE(hw::equal(hw::tensor({1, 2, 3}), hw::tensor({1, 2, 4})));
  EXPECT_FALSE(hw::equal(hw::tensor({1, 2, 3}), hw::tensor({1, 2})));
  EXPECT_FALSE(hw::equal(hw::ones({3}), hw::ones({1, 3})));  // equal shapes, not broadcast
  EXPECT_FALSE(hw::equal(hw::tensor({nan}), hw::tensor({nan})));
  EXPECT_TRUE(hw::equal(x.t(), x.t().contiguous()));

  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::isclose(hw::ones({2}), hw::ones({2}, {.dtype = hw::kFloat64})); },
                                               "isclose: expected both inputs to have the same dtype, but got float32 "
                                               "and float64"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::isclose(hw::ones({2}), hw::ones({2}), -1.0); },
                                               "rtol must be greater than or equal to zero"));
}

TEST(Comparison, DeviceMismatch) {
  const Tensor cpu = hw::ones({3});
  const Tensor other = hw::ones({3}, {.device = hw::test::other_device()});
  const Tensor other_mask = hw::ones({3}, {.dtype = hw::kBool, .device = hw::test::other_device()});
  const auto msg = [](const char* arg, const char* op) {
    return std::string("Expected all tensors to be on the same device, but found at least two devices, cpu and "
                       "test:0! (when checking argument '") + arg + "' of " + op + ")";
  };
  using E = hw::DeviceMismatchError;
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu == other; }, msg("other", "eq")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu != other; }, msg("other", "ne")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu < other; }, msg("other", "lt")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu <= other; }, msg("other", "le")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu > other; }, msg("other", "gt")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu >= other; }, msg("other", "ge")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu && other; }, msg("other", "logical_and")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu || other; }, msg("other", "logical_or")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::logical_xor(cpu, other); }, msg("other", "logical_xor")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::isclose(cpu, other); }, msg("other", "isclose")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::allclose(cpu, other); }, msg("other", "isclose")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::equal(cpu, other); }, msg("other", "equal")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::where(other_mask, cpu, cpu); }, "test:0 and cpu! (when checking argument 'self' of where)"));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::where(cpu > 0, cpu, other); }, msg("other", "where")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::where(cpu > 0, 1, other); }, msg("other", "where")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { hw::where(cpu > 0, other, 1); }, msg("self", "where")));
  EXPECT_TRUE(hw::test::throws_with<E>([&] { cpu.masked_fill(other_mask, 1); }, msg("mask", "masked_fill")));
  Tensor target = hw::ones({3});
  EXPECT_TRUE(hw::test::throws_with<E>([&] { target.masked_fill_(other_mask, 0); }, msg("mask", "masked_fill_")));
  EXPECT_EQ(target.to_vector<float>(), (std::vector<float>{1, 1, 1}));
}
