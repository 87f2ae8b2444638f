// functional: batch_norm, layer_norm, group_norm and embedding, composed from existing ops (reductions,
// elementwise, index_select), so their gradients come from those ops' rules. The composite
// costs a few passes over the activations more than a fused kernel would; at the sizes of the
// bundled models that is small next to the convolutions and GEMMs.
#include <algorithm>
#include <string>

#include "hwaro/autograd.h"
#include "hwaro/nn/functional.h"
#include "hwaro/ops.h"
#include "nn/compute_dtype.h"
#include "ops/op_helpers.h"

namespace hwaro::nn::functional {
namespace {

// A [C] tensor shaped to broadcast along dim 1 of an ndim-D input: [1, C, 1, ...].
Tensor along_channels(const Tensor& t, std::int64_t ndim) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(ndim), 1);
  shape[1] = t.size(0);
  return t.reshape(shape);
}

void check_channel_vector(const char* what, const Tensor& t, std::int64_t channels) {
  if (!t.defined()) return;
  HWARO_CHECK(t.dim() == 1 && t.size(0) == channels, "batch_norm: expected ", what, " of shape [", channels,
              "] (one per channel of the input), got ", t.sizes());
}

// As Linear's GEMM and PyTorch's norms: an affine weight or bias in another dtype than the input is
// refused, rather than silently promoting the output (a float64 batch through float32 layers).
void check_affine_dtype(const char* op, const char* what, const Tensor& t, const Tensor& x) {
  HWARO_CHECK(!t.defined() || t.dtype() == x.dtype(), op, ": expected ", what, " of the input's dtype ", x.dtype(),
              ", got ", t.dtype(), "; convert the module with .to(dtype) or the input with .to(", t.dtype(), ")");
}

// PyTorch's embedding_renorm_: the rows that `indices` pick and whose norm exceeds max_norm are
// scaled to max_norm / (norm + 1e-7) of themselves, in place and outside autograd. A row picked
// twice is written twice with the same value.
void renorm_rows(Tensor weight, const Tensor& indices, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  const Tensor rows = weight.index_select(0, indices);
  const Tensor norms = rows.norm(norm_type, {1}, /*keepdim=*/true);
  const Tensor scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0);
  weight.scatter_(0, indices.unsqueeze(1).expand({-1, weight.size(1)}), rows * scale);
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  HWARO_CHECK(x.defined() && x.dim() >= 2, "batch_norm: expected an input of at least 2 dimensions [N, C, ...], got ",
              x.defined() ? x.sizes() : IntArrayRef{});
  HWARO_CHECK(x.is_floating_point(), "batch_norm: expected a floating point input, got ", x.dtype());
  // Before anything runs: a running statistic on another device must not be half updated.
  ops::check_same_device_where_defined("batch_norm", {{"input", x}, {"running_mean", running_mean},
                                                      {"running_var", running_var}, {"weight", weight}, {"bias", bias}});
  const std::int64_t channels = x.size(1), ndim = x.dim();
  check_channel_vector("running_mean", running_mean, channels);
  check_channel_vector("running_var", running_var, channels);
  check_channel_vector("weight", weight, channels);
  check_channel_vector("bias", bias, channels);
  check_affine_dtype("batch_norm", "weight", weight, x);
  check_affine_dtype("batch_norm", "bias", bias, x);
  HWARO_CHECK(running_mean.defined() == running_var.defined(),
              "batch_norm: running_mean and running_var must be given together");
  std::vector<std::int64_t> dims = {0};
  for (std::int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  const std::int64_t count = x.numel() / channels;

  // 16-bit inputs are normalised in float32 (compute_dtype.h); the output has the input's dtype.
  const DType wide = compute_dtype(x.dtype());
  const Tensor wx = x.to(wide);
  const Tensor w = weight.defined() ? weight.to(wide) : weight, b = bias.defined() ? bias.to(wide) : bias;
  Tensor mean, var;
  if (training || !running_mean.defined()) {
    HWARO_CHECK(count > 1, "batch_norm: expected more than 1 value per channel when training, got input of shape ",
                x.sizes());
    mean = wx.mean(dims, /*keepdim=*/true);
    const Tensor centred = wx - mean;
    var = (centred * centred).mean(dims, /*keepdim=*/true);
    if (training && running_mean.defined()) {
      NoGradGuard no_grad;
      const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      Tensor rm = running_mean, rv = running_var;
      rm.mul_(1.0 - momentum).add_(mean.detach().reshape({channels}).to(rm.dtype()), momentum);
      rv.mul_(1.0 - momentum).add_(var.detach().reshape({channels}).to(rv.dtype()), momentum * unbias);
    }
    Tensor y = centred * (var + eps).rsqrt();
    if (w.defined()) y = y * along_channels(w, ndim);
    return (b.defined() ? y + along_channels(b, ndim) : y).to(x.dtype());
  }
  // Evaluation: the running statistics are constants, so scale and shift fold into one [C] each.
  Tensor scale = (running_var.to(wide) + eps).rsqrt();
  if (w.defined()) scale = scale * w;
  Tensor shift = -running_mean.to(wide) * scale;
  if (b.defined()) shift = shift + b;
  return (wx * along_channels(scale, ndim) + along_channels(shift, ndim)).to(x.dtype());
}

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  const auto k = static_cast<std::int64_t>(normalized_shape.size());
  HWARO_CHECK(x.defined() && k >= 1 && x.dim() >= k, "layer_norm: expected an input whose last ", k,
              " dims are normalized_shape ", normalized_shape, ", got ", x.defined() ? x.sizes() : IntArrayRef{});
  HWARO_CHECK(x.is_floating_point(), "layer_norm: expected a floating point input, got ", x.dtype());
  ops::check_same_device_where_defined("layer_norm", {{"input", x}, {"weight", weight}, {"bias", bias}});
  for (std::int64_t i = 0; i < k; ++i) {
    HWARO_CHECK(x.size(x.dim() - k + i) == normalized_shape[i], "layer_norm: input of shape ", x.sizes(),
                " does not end in normalized_shape ", normalized_shape);
  }
  for (const Tensor* t : {&weight, &bias}) {
    HWARO_CHECK(!t->defined() || t->sizes() == normalized_shape, "layer_norm: expected ",
                t == &weight ? "weight" : "bias", " of shape ", normalized_shape, ", got ", t->sizes());
  }
  check_affine_dtype("layer_norm", "weight", weight, x);
  check_affine_dtype("layer_norm", "bias", bias, x);
  std::vector<std::int64_t> dims;
  for (std::int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  // 16-bit inputs are normalised in float32 (compute_dtype.h); the output has the input's dtype.
  const DType wide = compute_dtype(x.dtype());
  const Tensor wx = x.to(wide);
  const Tensor mean = wx.mean(dims, /*keepdim=*/true);
  const Tensor centred = wx - mean;
  const Tensor var = (centred * centred).mean(dims, /*keepdim=*/true);
  Tensor y = centred * (var + eps).rsqrt();
  if (weight.defined()) y = y * weight.to(wide);
  return (bias.defined() ? y + bias.to(wide) : y).to(x.dtype());
}

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  HWARO_CHECK(x.defined() && x.dim() >= 2, "group_norm: expected an input of at least 2 dimensions [N, C, *], got ",
              x.defined() ? x.sizes() : IntArrayRef{});
  HWARO_CHECK(x.is_floating_point(), "group_norm: expected a floating point input, got ", x.dtype());
  ops::check_same_device_where_defined("group_norm", {{"input", x}, {"weight", weight}, {"bias", bias}});
  const std::int64_t batch = x.size(0), channels = x.size(1), ndim = x.dim();
  HWARO_CHECK(num_groups > 0 && channels % num_groups == 0,
              "group_norm: expected the number of channels of the input to be divisible by num_groups, but got input "
              "of shape ",
              x.sizes(), " and num_groups=", num_groups);
  for (const Tensor* t : {&weight, &bias}) {
    HWARO_CHECK(!t->defined() || (t->dim() == 1 && t->size(0) == channels), "group_norm: expected ",
                t == &weight ? "weight" : "bias", " of shape [", channels, "] (one per channel of the input), got ",
                t->sizes());
  }
  check_affine_dtype("group_norm", "weight", weight, x);
  check_affine_dtype("group_norm", "bias", bias, x);
  // Each sample's group as one row: [N, G, C / G * positions]. The row length is given, not -1,
  // so that an empty batch reshapes too.
  // 16-bit inputs are normalised in float32 (compute_dtype.h); the output has the input's dtype.
  const DType wide = compute_dtype(x.dtype());
  const Tensor grouped =
      x.to(wide).reshape({batch, num_groups, x.numel() / std::max<std::int64_t>(batch, 1) / num_groups});
  const Tensor mean = grouped.mean({2}, /*keepdim=*/true);
  const Tensor centred = grouped - mean;
  const Tensor var = (centred * centred).mean({2}, /*keepdim=*/true);
  Tensor y = (centred * (var + eps).rsqrt()).reshape(x.sizes());
  if (weight.defined()) y = y * along_channels(weight.to(wide), ndim);
  return (bias.defined() ? y + along_channels(bias.to(wide), ndim) : y).to(x.dtype());
}

Tensor embedding(const Tensor& index_tensor, const Tensor& weight, std::optional<std::int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type) {
  HWARO_CHECK(index_tensor.defined() && (index_tensor.dtype() == kInt64 || index_tensor.dtype() == kInt32),
              "embedding: expected int64 or int32 indices, got ",
              index_tensor.defined() ? index_tensor.dtype() : kInt64, "; convert them with .to(hw::kInt64)");
  ops::check_same_device_where_defined("embedding", {{"weight", weight}, {"input", index_tensor}});
  // int32 indices, as PyTorch takes them, widened for index_select.
  const Tensor indices = index_tensor.to(kInt64);
  HWARO_CHECK(weight.defined() && weight.dim() == 2, "embedding: expected weight of 2 dimensions [num_embeddings, dim], got ",
              weight.defined() ? weight.sizes() : IntArrayRef{});
  std::vector<std::int64_t> out_shape = indices.sizes().vec();
  out_shape.push_back(weight.size(1));
  HWARO_CHECK(!max_norm || *max_norm >= 0.0, "embedding: max_norm must not be negative, got ", *max_norm);
  const Tensor flat = indices.reshape({-1});
  if (max_norm) renorm_rows(weight, flat, *max_norm, norm_type);  // before the lookup, as PyTorch's
  const Tensor rows = weight.index_select(0, flat);                // IndexError names a bad index
  if (!padding_idx.has_value()) return rows.reshape(out_shape);
  std::int64_t pad = *padding_idx;
  HWARO_CHECK(pad >= -weight.size(0) && pad < weight.size(0), "embedding: padding_idx ", pad,
              " must be within num_embeddings (", weight.size(0), ")");
  if (pad < 0) pad += weight.size(0);
  // The padding row's value, detached: no gradient reaches weight[padding_idx].
  const Tensor is_pad = (indices.reshape({-1, 1}) == full({1, 1}, pad, {.dtype = kInt64, .device = indices.device()}));
  return where(is_pad, rows.detach(), rows).reshape(out_shape);
}

}  // namespace hwaro::nn::functional
