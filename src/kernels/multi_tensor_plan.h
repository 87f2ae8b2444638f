#pragma once
// How a multi-tensor launch (cuda/multi_tensor_apply.cuh) divides its work: which items go into
// which launch, which blocks each item owns, and which elements each block runs. Plain C++, so
// that tests/test_multi_tensor_plan.cpp checks on the CPU that every element of every item is
// run exactly once, which the GPU kernel cannot show here.
#include <cstdint>
#include <limits>

#include "hwaro/macros.h"

namespace hwaro::kernels {

// The most blocks one launch may have: a grid's x dimension, and the block table's int32.
inline constexpr std::int64_t kMaxLaunchBlocks = std::numeric_limits<std::int32_t>::max() - 1;

// Groups the items 0..count-1 (item i has numel(i) elements) into launches of at most
// max_items items and at most kMaxLaunchBlocks blocks of elements_per_block elements each.
// Empty items are skipped. For each item taken, calls add(slot, item, first_block), slot being
// its place in the launch (0, 1, ...) and first_block the first of its blocks; at the end of
// each launch, calls flush(slots, blocks). The caller ensures that one item alone fits
// (ceil(numel / elements_per_block) <= kMaxLaunchBlocks).
template <typename NumelOf, typename Add, typename Flush>
void plan_multi_tensor_launches(std::int64_t count, NumelOf numel, std::int64_t elements_per_block, int max_items,
                                Add add, Flush flush) {
  int slots = 0;
  std::int64_t blocks = 0;
  for (std::int64_t item = 0; item < count; ++item) {
    const std::int64_t n = numel(item);
    if (n == 0) continue;
    const std::int64_t item_blocks = (n + elements_per_block - 1) / elements_per_block;
    if (slots == max_items || blocks + item_blocks > kMaxLaunchBlocks) {
      flush(slots, blocks);
      slots = 0;
      blocks = 0;
    }
    add(slots++, item, blocks);
    blocks += item_blocks;
  }
  if (slots > 0) flush(slots, blocks);
}

// The slot that owns block: the last k with first_block[k] <= block, by binary search over the
// launch's block table (first_block[0] == 0, ascending, slots entries).
HWARO_HOST_DEVICE inline int slot_of_block(const std::int32_t* first_block, int slots, std::int32_t block) {
  int lo = 0, hi = slots - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first_block[mid] <= block) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The elements [begin, end) of its item that a block runs.
struct ElementRange {
  std::int64_t begin, end;
};

HWARO_HOST_DEVICE inline ElementRange block_elements(std::int32_t block, std::int32_t item_first_block,
                                                     std::int64_t numel, std::int64_t elements_per_block) {
  const std::int64_t begin = static_cast<std::int64_t>(block - item_first_block) * elements_per_block;
  const std::int64_t end = begin + elements_per_block < numel ? begin + elements_per_block : numel;
  return {begin, end};
}

}  // namespace hwaro::kernels
