#pragma once
// Data sets (guide §3.2): something with a size that returns one Example by index.
// get() is called from several DataLoader worker threads at once, so it must not
// change shared state without its own lock.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::data {

// One sample: its input and its label.
struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset();
  virtual std::size_t size() const = 0;
  virtual Example get(std::size_t index) const = 0;
};

// Rows of two tensors: sample i is {data[i], target[i]} (views, no copy).
// data and target must have the same first dimension.
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor target);
  std::size_t size() const override;
  Example get(std::size_t index) const override;

 private:
  Tensor data_;
  Tensor target_;
};

// The samples of `base` at `indices`, in that order (torch.utils.data.Subset).
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<Dataset> base, std::vector<std::size_t> indices);
  std::size_t size() const override;
  Example get(std::size_t index) const override;
  const std::vector<std::size_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<Dataset> base_;
  std::vector<std::size_t> indices_;
};

// Splits `dataset` into disjoint random subsets of the given lengths, which must add up to its
// size. The same seed gives the same split (torch.utils.data.random_split).
std::vector<std::shared_ptr<Subset>> random_split(const std::shared_ptr<Dataset>& dataset,
                                                  const std::vector<std::size_t>& lengths, std::uint64_t seed);

// Throws hw::IndexError naming the data set when index >= size.
void check_index(std::size_t index, std::size_t size, const char* dataset_name);

}  // namespace hwaro::data
