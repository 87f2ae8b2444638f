#pragma once
// torch.utils.data.distributed.DistributedSampler: with one process per rank, each rank reads
// its own shard of the data set, and the shards change every epoch.
//   auto sampler = std::make_shared<hw::data::DistributedSampler>(
//       dataset->size(), hw::distributed::get_world_size(), hw::distributed::get_rank(),
//       hw::data::DistributedSamplerOptions{.shuffle = true, .seed = 7});
//   auto shard = std::make_shared<hw::data::DistributedShard>(dataset, sampler);
//   hw::data::DataLoader loader(shard, {.batch_size = 64});       // shuffle off: the sampler shuffles
//   for (epoch ...) { sampler->set_epoch(epoch); for (auto& batch : loader) ... }
// Every rank permutes all indices the same way (seed and epoch), pads the list by repeating its
// start to a multiple of num_replicas (or, with drop_last, cuts its end off down to one), and
// takes every num_replicas-th index from position rank, as PyTorch does. The rank and world size
// are arguments (not read from the process group) because the data layer sits below hw::distributed.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "hwaro/data/dataset.h"

namespace hwaro::data {

struct DistributedSamplerOptions {
  bool shuffle = true;
  std::uint64_t seed = 0;   // must be the same on every rank
  bool drop_last = false;   // true: drop the tail instead of padding, so no sample is read twice
};

class DistributedSampler {
 public:
  DistributedSampler(std::size_t dataset_size, int num_replicas, int rank, DistributedSamplerOptions options = {});

  // Call before every epoch with the same value on every rank; the order depends on it (and on
  // the seed) only. Safe to call while no epoch of a loader over the shard is running.
  void set_epoch(std::uint64_t epoch) { epoch_.store(epoch); }
  std::uint64_t epoch() const { return epoch_.load(); }
  // This rank's indices for the current epoch, in the order to read them.
  std::vector<std::size_t> indices() const;
  // Indices per rank (every rank gets the same number; 0 for an empty data set, or for fewer samples
  // than ranks with drop_last).
  std::size_t size() const { return per_rank_; }
  int num_replicas() const { return num_replicas_; }
  int rank() const { return rank_; }

 private:
  std::size_t dataset_size_;
  int num_replicas_, rank_;
  DistributedSamplerOptions options_;
  std::size_t per_rank_;
  std::atomic<std::uint64_t> epoch_{0};
};

// The samples of `base` that the sampler gives this rank in its current epoch.
class DistributedShard : public Dataset {
 public:
  DistributedShard(std::shared_ptr<Dataset> base, std::shared_ptr<const DistributedSampler> sampler);
  std::size_t size() const override { return sampler_->size(); }
  Example get(std::size_t index) const override;

 private:
  std::shared_ptr<Dataset> base_;
  std::shared_ptr<const DistributedSampler> sampler_;
  mutable std::mutex mutex_;  // get() runs on several loader workers at once
  mutable std::uint64_t cached_epoch_ = 0;
  mutable std::vector<std::size_t> cached_;  // the sampler's indices for cached_epoch_ (empty: none yet)
};

}  // namespace hwaro::data
