#include "hwaro/data/distributed_sampler.h"

#include <numeric>
#include <random>

#include "hwaro/errors.h"

namespace hwaro::data {

DistributedSampler::DistributedSampler(std::size_t dataset_size, int num_replicas, int rank,
                                       DistributedSamplerOptions options)
    : dataset_size_(dataset_size), num_replicas_(num_replicas), rank_(rank), options_(options) {
  HWARO_CHECK(num_replicas > 0, "DistributedSampler: num_replicas must be positive, got ", num_replicas);
  HWARO_CHECK(rank >= 0 && rank < num_replicas, "DistributedSampler: rank must be in [0, ", num_replicas, "), got ",
              rank);
  const auto replicas = static_cast<std::size_t>(num_replicas);
  // As PyTorch: an empty data set, or fewer samples than ranks with drop_last, gives every rank an
  // empty shard (a loader over it yields no batches) rather than an error.
  per_rank_ = options.drop_last ? dataset_size / replicas : (dataset_size + replicas - 1) / replicas;
}

std::vector<std::size_t> DistributedSampler::indices() const {
  std::vector<std::size_t> all(dataset_size_);
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (options_.shuffle) {
    // Fisher-Yates from a generator every rank seeds alike, so all ranks agree on the permutation.
    // Plain modulo rather than std::uniform_int_distribution, whose output differs between
    // standard libraries (ranks built differently must still agree); its bias, i / 2^64, is nil
    // for any data set that fits in memory.
    std::mt19937_64 rng(options_.seed * 0x9E3779B97F4A7C15ULL + epoch());
    for (std::size_t i = all.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(rng() % i);
      std::swap(all[i - 1], all[j]);
    }
  }
  const std::size_t total = per_rank_ * static_cast<std::size_t>(num_replicas_);
  // Pad by repeating the permuted list from its start (drop_last: total <= size, nothing added).
  for (std::size_t i = 0; all.size() < total; ++i) all.push_back(all[i % dataset_size_]);
  std::vector<std::size_t> mine;
  mine.reserve(per_rank_);
  for (std::size_t i = static_cast<std::size_t>(rank_); i < total; i += static_cast<std::size_t>(num_replicas_)) {
    mine.push_back(all[i]);
  }
  return mine;
}

DistributedShard::DistributedShard(std::shared_ptr<Dataset> base, std::shared_ptr<const DistributedSampler> sampler)
    : base_(std::move(base)), sampler_(std::move(sampler)) {
  HWARO_CHECK(base_ != nullptr && sampler_ != nullptr, "DistributedShard: the data set and the sampler must be given");
}

Example DistributedShard::get(std::size_t index) const {
  check_index(index, size(), "DistributedShard");
  std::size_t source = 0;
  {
    std::lock_guard lock(mutex_);
    if (cached_.empty() || cached_epoch_ != sampler_->epoch()) {
      cached_ = sampler_->indices();
      cached_epoch_ = sampler_->epoch();
    }
    source = cached_[index];
  }
  return base_->get(source);
}

}  // namespace hwaro::data
