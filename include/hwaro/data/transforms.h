#pragma once
// Per-sample transforms (torchvision's), applied in Dataset::get() by TransformedDataset,
// so they run in the loader's worker threads. Image data is [C, H, W] (or [H, W]).
// Random transforms draw from the SampleRng of (loader seed, epoch, sample index):
// the same seed gives the same augmented samples whatever num_workers is.
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "hwaro/data/dataset.h"
#include "hwaro/data/sample_rng.h"

namespace hwaro::data {

class Transform {
 public:
  virtual ~Transform();
  virtual Example apply(Example example, SampleRng& rng) const = 0;
};

// (data - mean[c]) / std[c] per channel c of dim 0; one value applies to every channel.
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Example apply(Example example, SampleRng& rng) const override;

 private:
  std::vector<double> mean_, std_;
};

// Pads the last two dims with `padding` zeros on every side, then cuts a random height x width window.
class RandomCrop : public Transform {
 public:
  // As torchvision: RandomCrop(28, 4) is a 28 x 28 crop of the image padded by 4.
  explicit RandomCrop(std::int64_t size, std::int64_t padding = 0) : RandomCrop({size, size}, padding) {}
  RandomCrop(std::pair<std::int64_t, std::int64_t> height_width, std::int64_t padding);
  Example apply(Example example, SampleRng& rng) const override;

 private:
  std::int64_t height_, width_, padding_;
};

// Mirrors the last dim with probability p.
class RandomHorizontalFlip : public Transform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Example apply(Example example, SampleRng& rng) const override;

 private:
  double p_;
};

// A user function of the data tensor (torchvision's Lambda); the target passes through.
class Lambda : public Transform {
 public:
  explicit Lambda(std::function<Tensor(const Tensor&)> fn);
  Example apply(Example example, SampleRng& rng) const override;

 private:
  std::function<Tensor(const Tensor&)> fn_;
};

// `base` with `transforms` applied in order to every sample it returns.
class TransformedDataset : public Dataset {
 public:
  TransformedDataset(std::shared_ptr<Dataset> base, std::vector<std::shared_ptr<Transform>> transforms);
  std::size_t size() const override;
  Example get(std::size_t index) const override;

 private:
  std::shared_ptr<Dataset> base_;
  std::vector<std::shared_ptr<Transform>> transforms_;
};

}  // namespace hwaro::data
