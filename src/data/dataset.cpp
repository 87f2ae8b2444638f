// Dataset, TensorDataset, Subset and random_split.
#include "hwaro/data/dataset.h"

#include <numeric>

#include "hwaro/data/sample_rng.h"
#include "hwaro/errors.h"

namespace hwaro::data {

Dataset::~Dataset() = default;

void check_index(std::size_t index, std::size_t size, const char* dataset_name) {
  HWARO_CHECK_AS(IndexError, index < size, dataset_name, ": index ", index, " is out of range for a data set of ",
                 size, " samples");
}

TensorDataset::TensorDataset(Tensor data, Tensor target) : data_(std::move(data)), target_(std::move(target)) {
  HWARO_CHECK(data_.defined() && target_.defined(), "TensorDataset: data and target must both be defined tensors");
  HWARO_CHECK(data_.dim() >= 1 && target_.dim() >= 1,
              "TensorDataset: data and target need a first dimension that indexes samples, but found ", data_.dim(),
              "-D data and ", target_.dim(), "-D target");
  HWARO_CHECK(data_.size(0) == target_.size(0), "TensorDataset: data has ", data_.size(0), " samples but target has ",
              target_.size(0), "; their first dimensions must match");
}

std::size_t TensorDataset::size() const { return static_cast<std::size_t>(data_.size(0)); }

Example TensorDataset::get(std::size_t index) const {
  check_index(index, size(), "TensorDataset");
  const auto i = static_cast<std::int64_t>(index);
  return {data_.select(0, i), target_.select(0, i)};
}

Subset::Subset(std::shared_ptr<Dataset> base, std::vector<std::size_t> indices)
    : base_(std::move(base)), indices_(std::move(indices)) {
  HWARO_CHECK(base_ != nullptr, "Subset: the base data set is null");
  const std::size_t n = base_->size();
  for (std::size_t i : indices_) {
    HWARO_CHECK_AS(IndexError, i < n, "Subset: index ", i, " is out of range for a base data set of ", n, " samples");
  }
}

std::size_t Subset::size() const { return indices_.size(); }

Example Subset::get(std::size_t index) const {
  check_index(index, indices_.size(), "Subset");
  return base_->get(indices_[index]);
}

std::vector<std::shared_ptr<Subset>> random_split(const std::shared_ptr<Dataset>& dataset,
                                                  const std::vector<std::size_t>& lengths, std::uint64_t seed) {
  HWARO_CHECK(dataset != nullptr, "random_split: the data set is null");
  const std::size_t total = std::accumulate(lengths.begin(), lengths.end(), std::size_t{0});
  HWARO_CHECK(total == dataset->size(), "random_split: the lengths add up to ", total,
              " but the data set has ", dataset->size(), " samples; they must be equal");
  std::vector<std::size_t> order(total);
  std::iota(order.begin(), order.end(), std::size_t{0});
  SampleRng rng(seed);
  for (std::size_t i = total; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);  // Fisher-Yates
  std::vector<std::shared_ptr<Subset>> parts;
  std::size_t start = 0;
  for (std::size_t length : lengths) {
    std::vector<std::size_t> part(order.begin() + static_cast<std::ptrdiff_t>(start),
                                  order.begin() + static_cast<std::ptrdiff_t>(start + length));
    parts.push_back(std::make_shared<Subset>(dataset, std::move(part)));
    start += length;
  }
  return parts;
}

}  // namespace hwaro::data
