// functional::pad (torch.nn.functional.pad) against the float64 reference of
// support/pad_reference.h on fresh random inputs: every mode, 2-D to 5-D inputs, 1 to 3 padded
// dims, negative pads, integer and floating dtypes, non-contiguous inputs; gradients by finite
// differences; PyTorch's limits as errors that name the mode, dim, pad and size.
#include <functional>
#include <string>
#include <vector>

#include "support/pad_reference.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;
using F::PadMode;

struct PadCase {
  std::vector<std::int64_t> sizes, pad;
};

// Shapes and pads every mode takes (each pad below its dim's size, each output dim non-empty).
std::vector<PadCase> shared_cases() {
  return {
      {{2, 5}, {2, 3}},                    // 2-D input, the last dim
      {{2, 3, 6}, {3, 1}},                 // 3-D input, the last dim
      {{3, 4, 5}, {1, 2, 3, 0}},           // 3-D input, the last two dims
      {{2, 3, 4, 5}, {2, 1, 1, 3}},        // 4-D input, the last two dims
      {{1, 2, 3, 4, 5}, {1, 0, 2, 1, 2, 2}},  // 5-D input, the last three dims
      {{2, 2, 3, 4}, {3, 3, 2, 2}},        // reflect's largest pads: size - 1
      {{2, 3, 4, 5}, {-1, 2, 2, -1}},      // a crop on one side, a pad on the other
      {{2, 3, 4, 6}, {-2, -1, 0, 0}},      // crops only
  };
}

std::vector<PadCase> cases_for(PadMode mode) {
  std::vector<PadCase> cases = shared_cases();
  switch (mode) {
    case PadMode::Constant:
      cases.push_back({{3, 4}, {2, 1, 1, 0}});            // every dim of the input
      cases.push_back({{2, 3, 4}, {1, 1, 0, 2, 3, 1}});   // a 3-D pad of a 3-D input
      cases.push_back({{2, 5}, {-5, 0}});                 // cropped to nothing
      cases.push_back({{2, 5}, {-5, 3}});                 // cropped to nothing, then padded
      cases.push_back({{3, 4, 5}, {}});                   // no pad: a copy
      break;
    case PadMode::Reflect: cases.push_back({{1, 3, 4}, {-3, 2}}); break;  // reflects into what the crop removed
    case PadMode::Replicate: cases.push_back({{2, 2, 3}, {7, 5}}); break;  // pads longer than the dim
    case PadMode::Circular:
      cases.push_back({{2, 2, 3, 4}, {4, 4, 3, 3}});  // pads the whole dim
      cases.push_back({{2, 6}, {3, -2}});             // wraps the cropped line
      break;
  }
  return cases;
}

const char* name_of(PadMode mode) {
  switch (mode) {
    case PadMode::Constant: return "constant";
    case PadMode::Reflect: return "reflect";
    case PadMode::Replicate: return "replicate";
    case PadMode::Circular: return "circular";
  }
  return "?";
}

constexpr PadMode kModes[] = {PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular};

TEST(Pad, EveryModeMatchesTheFloat64Reference) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (PadMode mode : kModes) {
    for (const PadCase& c : cases_for(mode)) {
      for (DType dtype : {kFloat64, kFloat32, kInt64}) {
        for (bool strided : {false, true}) {
          const double value = mode == PadMode::Constant && dtype != kInt64 ? 1.5 : 0.0;
          SCOPED_TRACE(::testing::Message() << name_of(mode) << ", sizes " << IntArrayRef(c.sizes) << ", pad "
                                            << IntArrayRef(c.pad) << ", " << dtype << (strided ? ", strided" : "")
                                            << ", value " << value);
          Tensor x = random_tensor(c.sizes, dtype, rng, -9, 9);
          if (strided) x = non_contiguous_copy(x);
          const Tensor y = F::pad(x, c.pad, mode, value);
          const PaddedValues expected = ref_pad(values_of(x), c.sizes, c.pad, mode, value);
          ASSERT_EQ(y.sizes(), IntArrayRef(expected.sizes));
          EXPECT_EQ(y.dtype(), dtype);
          EXPECT_TRUE(all_close(values_of(y), expected.values, 0, 0));  // copies: exact
        }
      }
    }
  }
}

TEST(Pad, AlwaysReturnsATensorOfItsOwn) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor x = random_tensor({2, 3, 4}, kFloat32, rng);
  const std::vector<double> before = values_of(x);
  for (PadMode mode : kModes) {
    for (const std::vector<std::int64_t>& pad : {std::vector<std::int64_t>{0, 0}, {-1, 0}}) {
      SCOPED_TRACE(::testing::Message() << name_of(mode) << ", pad " << IntArrayRef(pad));
      Tensor y = F::pad(x, pad, mode);
      y.add_(1.0);
      EXPECT_EQ(values_of(x), before);
    }
  }
}

TEST(Pad, GradientsMatchFiniteDifferences) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<PadCase> cases = {
      {{2, 3, 4}, {3, 2, 2, 1}},          // reflect repeats elements: their gradients add up
      {{2, 3, 4}, {-1, 2, 1, -1}},        // crops
      {{1, 2, 2, 3, 3}, {1, 2, 0, 1, 1, 1}},  // three dims of a 5-D input
  };
  for (PadMode mode : kModes) {
    for (const PadCase& c : cases) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << name_of(mode) << ", sizes " << IntArrayRef(c.sizes) << ", pad "
                                          << IntArrayRef(c.pad) << (strided ? ", strided" : ""));
        Tensor x = random_tensor(c.sizes, kFloat64, rng);
        if (strided) x = non_contiguous_copy(x);
        x.set_requires_grad(true);
        const double value = mode == PadMode::Constant ? -0.5 : 0.0;
        const auto padded = [&](const std::vector<Tensor>& v) { return F::pad(v[0], c.pad, mode, value); };
        const auto r = autograd::gradcheck(padded, {x});
        EXPECT_TRUE(r.ok) << r.message;
      }
    }
  }
}

TEST(Pad, PyTorchsLimitsAreClearErrors) {
  const Tensor x = randn({1, 2, 3});
  const auto fails = [](const std::function<void()>& body, const std::string& needle) {
    return throws_with<Error>(body, needle);
  };
  EXPECT_TRUE(fails([&] { F::pad(Tensor(), {1, 1}); }, "undefined"));
  EXPECT_TRUE(fails([&] { F::pad(x, {1}); }, "(before, after) pairs"));
  EXPECT_TRUE(fails([&] { F::pad(randn({3}), {1, 1, 1, 1}); }, "pad 2 dims, but the input is 1-D"));
  EXPECT_TRUE(fails([&] { F::pad(x, {-2, -2}); },
                    "constant padding (-2, -2) of dim 2 crops 4 elements from a dim of size 3"));
  EXPECT_TRUE(fails([&] { F::pad(x, {3, 0}, PadMode::Reflect); },
                    "reflect padding (3, 0) of dim 2 must be smaller than the dim's size 3"));
  EXPECT_TRUE(fails([&] { F::pad(x, {0, 0, 1, 2}, PadMode::Reflect); },
                    "reflect padding (1, 2) of dim 1 must be smaller than the dim's size 2"));
  EXPECT_TRUE(fails([&] { F::pad(x, {4, 0}, PadMode::Circular); },
                    "circular padding (4, 0) of dim 2 would wrap around more than once: each pad must be at most "
                    "the dim's size 3"));
  // The wrap copies from what the crop leaves: 2 elements.
  EXPECT_TRUE(fails([&] { F::pad(randn({1, 4}), {3, -2}, PadMode::Circular); },
                    "circular padding (3, -2) of dim 1 would wrap around more than once: each pad must be at most "
                    "the dim's size 2 after the crop"));
  EXPECT_TRUE(fails([&] { F::pad(randn({1, 3}), {-2, -2}, PadMode::Circular); },
                    "circular padding (-2, -2) of dim 1 crops more than its size 3"));
  EXPECT_TRUE(fails([&] { F::pad(randn({1, 3}), {-2, -1}, PadMode::Reflect); },
                    "reflect padding (-2, -1) of dim 1 of size 3 leaves 0 elements"));
  // Only a batch dim may be empty, as in PyTorch, whether or not the empty dim is padded.
  EXPECT_TRUE(fails([&] { F::pad(randn({2, 0}), {1, 1}, PadMode::Replicate); },
                    "replicate padding needs every dim but the batch dim non-empty, got input of shape [2, 0] (dim 1 "
                    "is empty)"));
  EXPECT_TRUE(fails([&] { F::pad(randn({2, 0, 5}), {1, 1}, PadMode::Reflect); }, "[2, 0, 5] (dim 1 is empty)"));
  EXPECT_TRUE(fails([&] { F::pad(randn({0, 5}), {1, 1}, PadMode::Replicate); }, "[0, 5] (dim 0 is empty)"));
  EXPECT_TRUE(fails([&] { F::pad(randn({2, 3, 0}), {0, 0}, PadMode::Reflect); }, "[2, 3, 0] (dim 2 is empty)"));
  EXPECT_EQ(F::pad(randn({0, 2, 5}), {1, 1}, PadMode::Reflect).sizes(), IntArrayRef({0, 2, 7}));
  EXPECT_TRUE(fails([&] { F::pad(randn({2, 0}), {1, 1}, PadMode::Circular); },
                    "circular padding (1, 1) of dim 1 needs a non-empty dim, got size 0"));
  EXPECT_TRUE(fails([&] { F::pad(randn({5}), {1, 1}, PadMode::Replicate); },
                    "1 padded dims need a 2-D or 3-D input, got 1-D"));
  EXPECT_TRUE(fails([&] { F::pad(randn({2, 3, 4, 5}), {1, 1}, PadMode::Circular); },
                    "1 padded dims need a 2-D or 3-D input, got 4-D"));
  EXPECT_TRUE(fails([&] { F::pad(randn({1, 1, 2, 2, 2}), {1, 1, 1, 1, 1, 1, 1, 1}, PadMode::Reflect); },
                    "reflect padding pads the last 1, 2 or 3 dims"));
  EXPECT_TRUE(fails([&] { F::pad(x, {1, 1}, PadMode::Reflect, 2.0); }, "reflect padding takes no value"));
}

}  // namespace
}  // namespace hwaro::test
