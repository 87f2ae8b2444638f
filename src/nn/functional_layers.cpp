// functional: linear and dropout (the activations are functional_activations.cpp).
#include "hwaro/nn/functional.h"
#include "hwaro/ops.h"
#include "nn/compute_dtype.h"
#include "ops/op_helpers.h"

namespace hwaro::nn::functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  ops::check_same_device_where_defined("linear", {{"input", x}, {"weight", weight}, {"bias", bias}});
  HWARO_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear: input of shape ", x.sizes(),
              " has last dimension ", x.dim() >= 1 ? x.size(-1) : 0, " but the layer expects ", weight.size(1),
              " features (weight ", weight.sizes(), ")");
  if (x.dim() == 2 && bias.defined()) return addmm(bias, x, weight.t());
  const Tensor y = matmul(x, weight.t());
  return bias.defined() ? y + bias : y;
}

Tensor dropout(const Tensor& x, double p, bool training) {
  HWARO_CHECK(p >= 0.0 && p <= 1.0, "dropout probability has to be between 0 and 1, but got ", p);
  HWARO_CHECK(x.defined() && x.is_floating_point(), "dropout: expected a floating point input, got ",
              x.defined() ? x.dtype() : kFloat32, "; convert it with .to(hw::kFloat32)");
  if (!training || p == 0.0) return x;
  if (p == 1.0) return x * 0;
  // Drawn in float32 for half and bfloat16: their uniform draws lie on a grid of 2^-11 or 2^-8,
  // which would keep a fraction other than 1 - p (none at all for p close to 1).
  const Tensor keep = rand(x.sizes(), {.dtype = compute_dtype(x.dtype()), .device = x.device()}) >= p;
  return x * keep.to(x.dtype()) * (1.0 / (1.0 - p));
}

}  // namespace hwaro::nn::functional
