// kernels/multi_tensor_plan.h: the division of a multi-tensor launch's work (the GPU's fused
// optimiser step), simulated here block by block as the kernel runs it: every element of every
// item is run exactly once, no launch takes more items than it may, empty items take no block.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/multi_tensor_plan.h"

namespace hwaro::test {
namespace {

struct Launch {
  std::vector<std::int64_t> items;         // by slot
  std::vector<std::int32_t> first_block;   // by slot
  std::int64_t blocks = 0;
};

std::vector<Launch> plan(const std::vector<std::int64_t>& numels, std::int64_t elements_per_block, int max_items) {
  std::vector<Launch> launches(1);
  kernels::plan_multi_tensor_launches(
      static_cast<std::int64_t>(numels.size()), [&](std::int64_t i) { return numels[i]; }, elements_per_block,
      max_items,
      [&](int slot, std::int64_t item, std::int64_t first_block) {
        EXPECT_EQ(slot, static_cast<int>(launches.back().items.size())) << "slots are filled in order";
        launches.back().items.push_back(item);
        launches.back().first_block.push_back(static_cast<std::int32_t>(first_block));
      },
      [&](int slots, std::int64_t blocks) {
        EXPECT_EQ(slots, static_cast<int>(launches.back().items.size()));
        launches.back().blocks = blocks;
        launches.emplace_back();
      });
  EXPECT_TRUE(launches.back().items.empty()) << "every launch was flushed";
  launches.pop_back();
  return launches;
}

// Runs every block of every launch as the kernel does and counts the runs of each element.
std::vector<std::vector<int>> runs_of_each_element(const std::vector<std::int64_t>& numels,
                                                   const std::vector<Launch>& launches, std::int64_t elements_per_block) {
  std::vector<std::vector<int>> runs(numels.size());
  for (std::size_t i = 0; i < numels.size(); ++i) runs[i].assign(static_cast<std::size_t>(numels[i]), 0);
  for (const Launch& launch : launches) {
    const int slots = static_cast<int>(launch.items.size());
    for (std::int32_t block = 0; block < launch.blocks; ++block) {
      const int slot = kernels::slot_of_block(launch.first_block.data(), slots, block);
      const std::int64_t item = launch.items[static_cast<std::size_t>(slot)];
      const kernels::ElementRange range =
          kernels::block_elements(block, launch.first_block[static_cast<std::size_t>(slot)], numels[item],
                                  elements_per_block);
      EXPECT_LT(range.begin, range.end) << "block " << block << " has no work";
      for (std::int64_t e = range.begin; e < range.end; ++e) ++runs[item][static_cast<std::size_t>(e)];
    }
  }
  return runs;
}

void expect_each_element_runs_once(const std::vector<std::int64_t>& numels, std::int64_t elements_per_block,
                                   int max_items) {
  const std::vector<Launch> launches = plan(numels, elements_per_block, max_items);
  std::int64_t nonempty = 0;
  for (const std::int64_t n : numels) nonempty += n > 0 ? 1 : 0;
  std::int64_t taken = 0;
  for (const Launch& launch : launches) {
    ASSERT_FALSE(launch.items.empty());
    EXPECT_LE(static_cast<int>(launch.items.size()), max_items);
    EXPECT_EQ(launch.first_block[0], 0);
    for (const std::int64_t item : launch.items) EXPECT_GT(numels[item], 0) << "an empty item took a slot";
    taken += static_cast<std::int64_t>(launch.items.size());
  }
  EXPECT_EQ(taken, nonempty);
  const std::int64_t expected_launches = (nonempty + max_items - 1) / max_items;
  EXPECT_EQ(static_cast<std::int64_t>(launches.size()), expected_launches);
  const auto runs = runs_of_each_element(numels, launches, elements_per_block);
  for (std::size_t i = 0; i < numels.size(); ++i) {
    for (std::size_t e = 0; e < runs[i].size(); ++e) {
      ASSERT_EQ(runs[i][e], 1) << "item " << i << " (" << numels[i] << " elements), element " << e;
    }
  }
}

TEST(MultiTensorPlan, EveryElementOfEveryItemRunsOnceOnFreshRandomGroups) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int> count_of(1, 40);
  std::uniform_int_distribution<int> max_items_of(1, 9);
  std::uniform_int_distribution<std::int64_t> per_block_of(1, 64);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t per_block = per_block_of(rng);
    std::uniform_int_distribution<std::int64_t> numel_of(0, 5 * per_block + 3);
    std::vector<std::int64_t> numels(static_cast<std::size_t>(count_of(rng)));
    for (auto& n : numels) n = numel_of(rng) % 4 == 0 ? 0 : numel_of(rng);  // about a quarter empty
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_each_element_runs_once(numels, per_block, max_items_of(rng));
  }
}

TEST(MultiTensorPlan, TheEdgesOfABlockAndOfALaunch) {
  // Exact multiples of a block, one element past, one element; exactly max_items and one more.
  expect_each_element_runs_once({8, 9, 1, 16, 7}, 8, 5);
  expect_each_element_runs_once({8, 9, 1, 16, 7, 1}, 8, 5);
  expect_each_element_runs_once({0, 0, 3, 0}, 4, 1);
  EXPECT_TRUE(plan({0, 0}, 4, 2).empty()) << "nothing to run, no launch";
  // The GPU's own figures: 256 items a launch, 1024 elements a block; ResNet-18 has 62 tensors.
  std::vector<std::int64_t> many(600);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::int64_t>(1 + (i * 977) % 3000);
  expect_each_element_runs_once(many, 1024, 256);
  EXPECT_EQ(plan(many, 1024, 256).size(), 3U);
}

TEST(MultiTensorPlan, ALaunchEndsBeforeItsBlocksOverflowTheGrid) {
  const std::int64_t half = kernels::kMaxLaunchBlocks / 2 + 1;  // two of these do not fit in one launch
  const std::vector<Launch> launches = plan({half, half, 1}, 1, 256);
  ASSERT_EQ(launches.size(), 2U);
  EXPECT_EQ(launches[0].blocks, half);
  EXPECT_EQ(launches[1].items, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(launches[1].blocks, half + 1);
  for (const Launch& launch : launches) EXPECT_LE(launch.blocks, kernels::kMaxLaunchBlocks);
}

TEST(MultiTensorPlan, SlotOfBlockIsTheLastSlotStartingAtOrBeforeIt) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 200; ++trial) {
    std::uniform_int_distribution<int> slots_of(1, 256);
    std::uniform_int_distribution<std::int32_t> step_of(1, 50);
    const int slots = slots_of(rng);
    std::vector<std::int32_t> first_block(static_cast<std::size_t>(slots));
    for (int k = 1; k < slots; ++k) first_block[k] = first_block[k - 1] + step_of(rng);
    const std::int32_t end = first_block.back() + step_of(rng);
    int expected = 0;
    for (std::int32_t block = 0; block < end; ++block) {
      while (expected + 1 < slots && first_block[expected + 1] <= block) ++expected;  // the linear scan
      ASSERT_EQ(kernels::slot_of_block(first_block.data(), slots, block), expected) << "block " << block;
    }
  }
}

}  // namespace
}  // namespace hwaro::test
