// BatchNorm1d/2d, LayerNorm, GroupNorm and Embedding: parameters and buffers registered, forward through functional.
#include <sstream>

#include "hwaro/autograd.h"
#include "hwaro/nn/functional.h"
#include "hwaro/nn/init.h"
#include "hwaro/nn/normalization.h"
#include "hwaro/ops.h"

namespace hwaro::nn {

BatchNormImpl::BatchNormImpl(BatchNormOptions opts, std::int64_t min_dim, std::int64_t max_dim, const char* name)
    : options(opts), min_dim_(min_dim), max_dim_(max_dim), name_(name) {
  const std::int64_t c = options.num_features();
  HWARO_CHECK(c > 0, name_, ": num_features must be positive, got ", c);
  if (options.affine()) {
    weight = register_parameter("weight", ones({c}));
    bias = register_parameter("bias", zeros({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, {.dtype = kInt64}));
  }
}

void BatchNormImpl::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

Tensor BatchNormImpl::forward(const Tensor& input) {
  HWARO_CHECK(input.defined() && input.dim() >= min_dim_ && input.dim() <= max_dim_, name_, ": expected ",
              min_dim_ == max_dim_ ? std::to_string(min_dim_) + "-D" : std::to_string(min_dim_) + "-D or " + std::to_string(max_dim_) + "-D",
              " input, got ", input.defined() ? input.sizes() : IntArrayRef{});
  HWARO_CHECK(input.size(1) == options.num_features(), name_, ": expected ", options.num_features(),
              " channels (dim 1) but the input of shape ", input.sizes(), " has ", input.size(1));
  check_input_device(input);
  const bool use_batch_stats = is_training() || !options.track_running_stats();
  double momentum = options.momentum().value_or(0.0);
  if (!options.momentum().has_value() && is_training() && options.track_running_stats()) {
    // momentum=None: this batch weighs 1 / (batches so far, this one included), an equal average.
    momentum = 1.0 / static_cast<double>(num_batches_tracked.item<std::int64_t>() + 1);
  }
  // Without tracking the running tensors are undefined and the batch's statistics are used.
  Tensor out =
      functional::batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats, momentum, options.eps());
  // Counted once batch_norm has accepted the input, so that a refused batch leaves every buffer as it was.
  if (is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return out;
}

std::string BatchNormImpl::extra_repr() const {
  std::ostringstream s;
  s << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum().has_value()) {
    s << *options.momentum();
  } else {
    s << "None";  // the cumulative average, as PyTorch prints it
  }
  s << ", affine=" << (options.affine() ? "true" : "false")
    << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false");
  return s.str();
}

LayerNormImpl::LayerNormImpl(LayerNormOptions opts) : options(std::move(opts)) {
  const std::vector<std::int64_t>& shape = options.normalized_shape();
  HWARO_CHECK(!shape.empty(), "LayerNorm: normalized_shape must have at least one dim");
  for (std::int64_t d : shape) HWARO_CHECK(d > 0, "LayerNorm: normalized_shape must be positive, got ", IntArrayRef(shape));
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ones(shape));
    if (options.bias()) bias = register_parameter("bias", zeros(shape));
  }
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  check_input_device(input);
  return functional::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

std::string LayerNormImpl::extra_repr() const {
  std::ostringstream s;
  s << IntArrayRef(options.normalized_shape()) << ", eps=" << options.eps()
    << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false");
  return s.str();
}

GroupNormImpl::GroupNormImpl(GroupNormOptions opts) : options(opts) {
  const std::int64_t groups = options.num_groups(), channels = options.num_channels();
  HWARO_CHECK(groups > 0 && channels > 0, "GroupNorm: num_groups and num_channels must be positive, got ", groups,
              " and ", channels);
  HWARO_CHECK(channels % groups == 0, "GroupNorm: num_channels (", channels, ") must be divisible by num_groups (",
              groups, ")");
  if (options.affine()) {
    weight = register_parameter("weight", ones({channels}));
    bias = register_parameter("bias", zeros({channels}));
  }
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  HWARO_CHECK(input.defined() && input.dim() >= 2 && input.size(1) == options.num_channels(), "GroupNorm: expected ",
              options.num_channels(), " channels (dim 1), got input of shape ",
              input.defined() ? input.sizes() : IntArrayRef{});
  check_input_device(input);
  return functional::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

std::string GroupNormImpl::extra_repr() const {
  std::ostringstream s;
  s << options.num_groups() << ", " << options.num_channels() << ", eps=" << options.eps()
    << ", affine=" << (options.affine() ? "true" : "false");
  return s.str();
}

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions opts) : options(opts) {
  const std::int64_t n = options.num_embeddings(), dim = options.embedding_dim();
  HWARO_CHECK(n > 0 && dim > 0, "Embedding: num_embeddings and embedding_dim must be positive, got ", n, " and ", dim);
  if (options.padding_idx().has_value()) {
    const std::int64_t p = *options.padding_idx();
    HWARO_CHECK(p >= -n && p < n, "Embedding: padding_idx ", p, " must be within num_embeddings (", n, ")");
    options.padding_idx(p < 0 ? p + n : p);
  }
  weight = register_parameter("weight", empty({n, dim}));
  init::normal_(weight);
  if (options.padding_idx().has_value()) {
    NoGradGuard no_grad;
    weight.select(0, *options.padding_idx()).zero_();
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  check_input_device(indices);
  return functional::embedding(indices, weight, options.padding_idx(), options.max_norm(), options.norm_type());
}

std::string EmbeddingImpl::extra_repr() const {
  std::ostringstream s;
  s << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx().has_value()) s << ", padding_idx=" << *options.padding_idx();
  if (options.max_norm().has_value()) s << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2.0) s << ", norm_type=" << options.norm_type();
  return s.str();
}

}  // namespace hwaro::nn
