#pragma once
// BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm and Embedding, with LibTorch's options
// (hw::nn::BatchNorm2d(hw::nn::BatchNormOptions(64).momentum(0.01))).
#include <memory>
#include <optional>
#include <vector>

#include "hwaro/nn/module.h"
#include "hwaro/nn/option_arg.h"

namespace hwaro::nn {

struct BatchNormOptions {
  BatchNormOptions(std::int64_t num_features) : num_features_(num_features) {}  // NOLINT
  HWARO_ARG(std::int64_t, num_features);
  HWARO_ARG(double, eps) = 1e-5;
  // std::nullopt is PyTorch's momentum=None: the running statistics are the cumulative average of
  // every batch's (factor 1 / num_batches_tracked).
  HWARO_ARG(std::optional<double>, momentum) = 0.1;
  HWARO_ARG(bool, affine) = true;               // weight (ones) and bias (zeros) as parameters
  HWARO_ARG(bool, track_running_stats) = true;  // running_mean, running_var, num_batches_tracked as buffers
};

// Training: normalises with the batch's statistics and moves the running ones towards them;
// eval(): normalises with the running ones (with track_running_stats false, always the batch's).
class BatchNormImpl : public Module {
 public:
  BatchNormImpl(BatchNormOptions options, std::int64_t min_dim, std::int64_t max_dim, const char* name);
  Tensor forward(const Tensor& input) override;
  std::string name() const override { return name_; }
  std::string extra_repr() const override;
  void reset_running_stats();

  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  std::int64_t min_dim_, max_dim_;
  const char* name_;
};

// Input [N, C] or [N, C, L].
class BatchNorm1dImpl : public BatchNormImpl {
 public:
  explicit BatchNorm1dImpl(BatchNormOptions opts) : BatchNormImpl(opts, 2, 3, "BatchNorm1d") {}
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<BatchNorm1dImpl>(options); }
};
HWARO_MODULE(BatchNorm1d);

// Input [N, C, H, W].
class BatchNorm2dImpl : public BatchNormImpl {
 public:
  explicit BatchNorm2dImpl(BatchNormOptions opts) : BatchNormImpl(opts, 4, 4, "BatchNorm2d") {}
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<BatchNorm2dImpl>(options); }
};
HWARO_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<std::int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  HWARO_ARG(std::vector<std::int64_t>, normalized_shape);
  HWARO_ARG(double, eps) = 1e-5;
  HWARO_ARG(bool, elementwise_affine) = true;  // weight (ones) and bias (zeros) of normalized_shape
  HWARO_ARG(bool, bias) = true;  // false (PyTorch's bias=False): an affine weight without a bias
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(LayerNormOptions options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<LayerNormImpl>(options); }

  LayerNormOptions options;
  Tensor weight, bias;
};
HWARO_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(std::int64_t num_groups, std::int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  HWARO_ARG(std::int64_t, num_groups);
  HWARO_ARG(std::int64_t, num_channels);  // divisible by num_groups
  HWARO_ARG(double, eps) = 1e-5;
  HWARO_ARG(bool, affine) = true;  // weight (ones) and bias (zeros) [num_channels] as parameters
};

// Input [N, C, *]: each sample's groups of channels normalised with their own statistics, the
// same in training and eval() (no running statistics), so it does not depend on the batch size.
class GroupNormImpl : public Module {
 public:
  explicit GroupNormImpl(GroupNormOptions options);
  GroupNormImpl(std::int64_t num_groups, std::int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<GroupNormImpl>(options); }

  GroupNormOptions options;
  Tensor weight, bias;
};
HWARO_MODULE(GroupNorm);

struct EmbeddingOptions {
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  HWARO_ARG(std::int64_t, num_embeddings);
  HWARO_ARG(std::int64_t, embedding_dim);
  HWARO_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;  // that row starts at 0 and gets no gradient
  // Rows a forward looks up are first renormalised in place to a norm_type-norm of at most max_norm.
  HWARO_ARG(std::optional<double>, max_norm) = std::nullopt;
  HWARO_ARG(double, norm_type) = 2.0;
};

// weight [num_embeddings, embedding_dim] ~ N(0, 1), as PyTorch.
class EmbeddingImpl : public Module {
 public:
  explicit EmbeddingImpl(EmbeddingOptions options);
  EmbeddingImpl(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<EmbeddingImpl>(options); }

  EmbeddingOptions options;
  Tensor weight;
};
HWARO_MODULE(Embedding);

}  // namespace hwaro::nn
