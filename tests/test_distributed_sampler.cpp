// hw::data::DistributedSampler and DistributedShard, with explicit ranks (no MPI needed): the
// shards of all ranks cover the data set exactly once (padded or dropped to equal sizes
// otherwise), are disjoint, agree across ranks on the permutation, change with set_epoch and
// only with it, and the shard data set reads the right samples.
#include <algorithm>
#include <map>
#include <set>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

using data::DistributedSampler;

std::vector<std::vector<std::size_t>> shards(std::size_t n, int world, data::DistributedSamplerOptions options,
                                             std::uint64_t epoch) {
  std::vector<std::vector<std::size_t>> out;
  for (int r = 0; r < world; ++r) {
    DistributedSampler s(n, world, r, options);
    s.set_epoch(epoch);
    out.push_back(s.indices());
    EXPECT_EQ(out.back().size(), s.size());
  }
  return out;
}

TEST(DistributedSampler, ShardsCoverEverySampleOnceWhenTheyDivide) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  for (int world : {1, 2, 3, 4}) {
    const std::size_t n = 12 * static_cast<std::size_t>(world);
    std::multiset<std::size_t> seen;
    for (const auto& shard : shards(n, world, {.seed = seed}, 0)) {
      EXPECT_EQ(shard.size(), 12u);
      seen.insert(shard.begin(), shard.end());
    }
    std::multiset<std::size_t> expected;
    for (std::size_t i = 0; i < n; ++i) expected.insert(i);
    EXPECT_EQ(seen, expected);
  }
}

TEST(DistributedSampler, UnevenSizesArePaddedOrDropped) {
  const std::uint64_t seed = fresh_seed();
  // 10 samples over 3 ranks: 4 each, two samples repeated (the start of the permuted list).
  std::map<std::size_t, int> count;
  for (const auto& shard : shards(10, 3, {.seed = seed}, 5)) {
    EXPECT_EQ(shard.size(), 4u);
    for (std::size_t i : shard) ++count[i];
  }
  EXPECT_EQ(count.size(), 10u);
  int repeated = 0;
  for (const auto& [_, c] : count) repeated += c - 1;
  EXPECT_EQ(repeated, 2);
  // drop_last: 3 each, 9 distinct samples.
  std::set<std::size_t> kept;
  for (const auto& shard : shards(10, 3, {.seed = seed, .drop_last = true}, 5)) {
    EXPECT_EQ(shard.size(), 3u);
    kept.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(kept.size(), 9u);
}

// PyTorch's rule written out independently: the permutation is what one replica reads; rank r
// reads positions r, r + world, ... of it, extended cyclically (padding) or cut (drop_last).
TEST(DistributedSampler, RanksReadStridesOfOneSharedPermutation) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  for (bool drop_last : {false, true}) {
    for (int world : {2, 3, 5}) {
      for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{23}, std::size_t{30}}) {
        if (drop_last && n < static_cast<std::size_t>(world)) continue;
        const data::DistributedSamplerOptions options{.seed = seed, .drop_last = drop_last};
        DistributedSampler whole(n, 1, 0, options);
        whole.set_epoch(4);
        const std::vector<std::size_t> perm = whole.indices();
        const std::size_t w = static_cast<std::size_t>(world);
        const std::size_t per_rank = drop_last ? n / w : (n + w - 1) / w;
        const auto got = shards(n, world, options, 4);
        for (std::size_t r = 0; r < w; ++r) {
          std::vector<std::size_t> want;
          for (std::size_t k = 0; k < per_rank; ++k) want.push_back(perm[(r + k * w) % n]);
          EXPECT_EQ(got[r], want) << "n " << n << " world " << world << " rank " << r << " drop_last " << drop_last;
        }
      }
    }
  }
}

TEST(DistributedSampler, WithoutShuffleRanksTakeEveryWorldthIndex) {
  const auto s = shards(7, 2, {.shuffle = false}, 3);
  EXPECT_EQ(s[0], (std::vector<std::size_t>{0, 2, 4, 6}));
  EXPECT_EQ(s[1], (std::vector<std::size_t>{1, 3, 5, 0}));
}

TEST(DistributedSampler, EpochsReshuffleAndTheSameEpochRepeats) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  const auto a = shards(1000, 2, {.seed = seed}, 0), again = shards(1000, 2, {.seed = seed}, 0);
  const auto b = shards(1000, 2, {.seed = seed}, 1);
  EXPECT_EQ(a, again);
  EXPECT_NE(a[0], b[0]);
  std::vector<std::size_t> sorted_a = a[0], identity(500);
  std::sort(sorted_a.begin(), sorted_a.end());
  for (std::size_t i = 0; i < 500; ++i) identity[i] = 2 * i;
  EXPECT_NE(sorted_a, identity);  // shuffled across the whole set, not within a stride
  EXPECT_NE(a, shards(1000, 2, {.seed = seed + 1}, 0));  // the seed matters too
}

TEST(DistributedSampler, ShardReadsTheSamplersSamplesOfTheCurrentEpoch) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor x = random_tensor({9, 2}, kFloat32, rng);
  const Tensor y = arange(9);
  auto base = std::make_shared<data::TensorDataset>(x, y);
  auto sampler = std::make_shared<DistributedSampler>(9, 2, 1, data::DistributedSamplerOptions{.seed = 3});
  data::DistributedShard shard(base, sampler);
  for (std::uint64_t epoch : {0u, 1u}) {
    sampler->set_epoch(epoch);
    const std::vector<std::size_t> want = sampler->indices();
    ASSERT_EQ(shard.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const data::Example e = shard.get(i);
      EXPECT_EQ(e.target.item<std::int64_t>(), static_cast<std::int64_t>(want[i]));
      EXPECT_EQ(values_of(e.data), values_of(x[static_cast<std::int64_t>(want[i])]));
    }
  }
  EXPECT_TRUE(throws_with<IndexError>([&] { shard.get(5); }, "DistributedShard"));
}

TEST(DistributedSampler, BadArgumentsAreClearErrors) {
  EXPECT_TRUE(throws_with<Error>([] { DistributedSampler(10, 0, 0); }, "num_replicas must be positive"));
  EXPECT_TRUE(throws_with<Error>([] { DistributedSampler(10, 2, 2); }, "rank must be in [0, 2), got 2"));
}

// As PyTorch (num_samples = 0): no samples, or fewer than ranks with drop_last, is an empty shard
// on every rank, and a loader over it ends at once, with or without workers.
TEST(DistributedSampler, TooFewSamplesGiveEmptyShardsThatLoadNoBatches) {
  for (bool drop_last : {false, true}) {
    for (const auto& shard : shards(0, 3, {.drop_last = drop_last}, 0)) EXPECT_TRUE(shard.empty());
  }
  for (const auto& shard : shards(2, 3, {.drop_last = true}, 0)) EXPECT_TRUE(shard.empty());
  // Without drop_last, fewer samples than ranks are padded to one each.
  for (const auto& shard : shards(2, 3, {}, 0)) EXPECT_EQ(shard.size(), 1u);

  auto base = std::make_shared<data::TensorDataset>(zeros({2, 3}), arange(2));
  auto sampler = std::make_shared<DistributedSampler>(2, 3, 2, data::DistributedSamplerOptions{.drop_last = true});
  auto shard = std::make_shared<data::DistributedShard>(base, sampler);
  EXPECT_EQ(shard->size(), 0u);
  for (int workers : {0, 2}) {
    data::DataLoader loader(shard, {.batch_size = 4, .num_workers = workers, .persistent_workers = workers > 0});
    EXPECT_EQ(loader.size(), 0u);
    for (int epoch = 0; epoch < 2; ++epoch) {
      sampler->set_epoch(static_cast<std::uint64_t>(epoch));
      std::size_t batches = 0;
      for ([[maybe_unused]] auto& batch : loader) ++batches;
      EXPECT_EQ(batches, 0u) << workers << " workers";
    }
  }
}

}  // namespace
}  // namespace hwaro::test
