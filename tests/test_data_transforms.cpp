// Per-sample transforms against float64 references on fresh random images, and their
// reproducibility: the same (seed, epoch, index) gives the same augmented sample.
#include "hwaro/data.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

using data::Example;
using data::SampleRng;

// value of a [C, H, W] image at (c, y, x) from its flat float64 copy.
double at(const std::vector<double>& v, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t y,
          std::int64_t x) {
  return v[static_cast<std::size_t>((c * h + y) * w + x)];
}

TEST(Transforms, NormalizeSubtractsMeanAndDividesStdPerChannel) {
  std::mt19937_64 rng(fresh_seed());
  Tensor image = random_tensor({3, 4, 5}, kFloat32, rng, 0.0, 1.0);
  const std::vector<double> mean = {0.1, 0.5, 0.9}, stdev = {0.2, 0.3, 0.4};
  SampleRng sample_rng(1);
  Example out = data::Normalize(mean, stdev).apply({image, scalar_tensor(3)}, sample_rng);
  const auto in = values_of(image), got = values_of(out.data);
  ASSERT_EQ(got.size(), in.size());
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t y = 0; y < 4; ++y)
      for (std::int64_t x = 0; x < 5; ++x)
        EXPECT_NEAR(at(got, 4, 5, c, y, x), (at(in, 4, 5, c, y, x) - mean[c]) / stdev[c], 1e-5);
  EXPECT_EQ(out.target.item<double>(), 3);
  EXPECT_THROW(data::Normalize({0.1, 0.2}, {0.1, 0.2}).apply({image, {}}, sample_rng), Error);  // 2 vs 3 channels
  EXPECT_THROW(data::Normalize({0.1}, {0.0}), Error);  // zero std
}

TEST(Transforms, RandomCropCutsAWindowOfThePaddedImage) {
  std::mt19937_64 rng(fresh_seed());
  Tensor image = random_tensor({2, 6, 6}, kFloat32, rng, 0.5, 1.0);  // never 0, so padding is visible
  const auto in = values_of(image);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    SampleRng a(seed), b(seed);
    Example out = data::RandomCrop(6, /*padding=*/2).apply({image, {}}, a);
    Example again = data::RandomCrop(6, 2).apply({image, {}}, b);
    ASSERT_EQ(out.data.sizes(), (std::vector<std::int64_t>{2, 6, 6}));
    const auto got = values_of(out.data);
    EXPECT_EQ(got, values_of(again.data)) << "same seed, same crop";
    // Find the offset: the window must equal the zero-padded image at one (top, left).
    bool found = false;
    for (std::int64_t top = 0; top <= 4 && !found; ++top)
      for (std::int64_t left = 0; left <= 4 && !found; ++left) {
        bool match = true;
        for (std::int64_t c = 0; c < 2 && match; ++c)
          for (std::int64_t y = 0; y < 6 && match; ++y)
            for (std::int64_t x = 0; x < 6 && match; ++x) {
              const std::int64_t sy = y + top - 2, sx = x + left - 2;
              const double want = (sy < 0 || sy >= 6 || sx < 0 || sx >= 6) ? 0.0 : at(in, 6, 6, c, sy, sx);
              match = at(got, 6, 6, c, y, x) == want;
            }
        found = match;
      }
    EXPECT_TRUE(found) << "seed " << seed;
  }
  SampleRng r(0);
  EXPECT_THROW(data::RandomCrop(8).apply({image, {}}, r), Error);  // larger than the image
}

TEST(Transforms, RandomHorizontalFlipMirrorsTheLastDim) {
  std::mt19937_64 rng(fresh_seed());
  Tensor image = random_tensor({1, 3, 4}, kFloat32, rng);
  const auto in = values_of(image);
  SampleRng r(7);
  const auto flipped = values_of(data::RandomHorizontalFlip(1.0).apply({image, {}}, r).data);
  for (std::int64_t y = 0; y < 3; ++y)
    for (std::int64_t x = 0; x < 4; ++x) EXPECT_EQ(at(flipped, 3, 4, 0, y, x), at(in, 3, 4, 0, y, 3 - x));
  EXPECT_EQ(values_of(data::RandomHorizontalFlip(0.0).apply({image, {}}, r).data), in);
}

TEST(Transforms, TransformedDatasetIsReproducibleForAnyWorkerCount) {
  std::mt19937_64 rng(fresh_seed());
  auto base = std::make_shared<data::TensorDataset>(random_tensor({16, 1, 5, 5}, kFloat32, rng, 0.1, 1.0),
                                                    arange(16));
  auto augmented = std::make_shared<data::TransformedDataset>(
      base, std::vector<std::shared_ptr<data::Transform>>{std::make_shared<data::RandomCrop>(5, 1),
                                                          std::make_shared<data::RandomHorizontalFlip>()});
  EXPECT_EQ(augmented->size(), 16u);
  auto collect = [&](std::shared_ptr<data::Dataset> dataset, int workers) {
    data::DataLoader loader(dataset, {.batch_size = 4, .shuffle = true, .num_workers = workers, .seed = 42});
    std::vector<double> all;
    for (const auto& batch : loader) {
      const auto v = values_of(batch.data);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  const auto serial = collect(augmented, 0);
  EXPECT_EQ(serial, collect(augmented, 2));
  EXPECT_NE(serial, collect(base, 0));  // the same order without augmentation differs
}

}  // namespace
}  // namespace hwaro::test
