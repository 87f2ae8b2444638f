// functional: the activations, composed from elementwise primitives so that autograd derives
// their gradients. The branch that a where() does not take is still computed, so each branch is
// fed only inputs where it is finite (elu's e^x on x <= 0, softplus's on beta x <= threshold):
// an inf there would turn its zero gradient into NaN.
#include <string>

#include "hwaro/nn/functional.h"
#include "hwaro/ops.h"
#include "nn/compute_dtype.h"

namespace hwaro::nn::functional {
namespace {

void check_floating(const char* op, const Tensor& x) {
  HWARO_CHECK(x.defined(), op, ": expected a defined tensor");
  HWARO_CHECK(x.is_floating_point(), op, ": expected a floating point input, got ", x.dtype(),
              "; convert it with .to(hw::kFloat32)");
}

// PyTorch's SELU constants (Klambauer et al., 2017).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

Tensor relu(const Tensor& x) { return x.relu(); }
Tensor gelu(const Tensor& x, bool tanh_approximation) { return x.gelu(tanh_approximation); }
Tensor silu(const Tensor& x) { return x.silu(); }
Tensor softmax(const Tensor& x, std::int64_t dim) { return x.softmax(dim); }
Tensor log_softmax(const Tensor& x, std::int64_t dim) { return x.log_softmax(dim); }

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  check_floating("leaky_relu", x);
  return where(x > 0, x, x * negative_slope);
}

Tensor elu(const Tensor& x, double alpha) {
  check_floating("elu", x);
  return where(x > 0, x, x.clamp(std::nullopt, 0.0).expm1() * alpha);
}

Tensor selu(const Tensor& x) {
  check_floating("selu", x);
  return elu(x, kSeluAlpha) * kSeluScale;
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  check_floating("softplus", x);
  HWARO_CHECK(beta != 0.0, "softplus: beta must not be 0");
  const Tensor wide = x.to(compute_dtype(x.dtype()));
  const Tensor scaled = wide * beta;
  const Tensor smooth = scaled.clamp(std::nullopt, threshold).exp().log1p() / beta;
  return where(scaled > threshold, wide, smooth).to(x.dtype());
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  check_floating("hardtanh", x);
  HWARO_CHECK(min_val <= max_val, "hardtanh: min_val (", min_val, ") must not be greater than max_val (", max_val,
              ")");
  // The values are clamp's; the gradient passes only where min_val < x < max_val (clamp's own
  // passes at the ends too), as PyTorch's hardtanh_backward.
  const Tensor inside = (x > min_val) && (x < max_val);
  return where(inside, x, x.clamp(min_val, max_val).detach());
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }

Tensor hardsigmoid(const Tensor& x) {
  check_floating("hardsigmoid", x);
  return where(x <= -3.0, 0.0, where(x >= 3.0, 1.0, x / 6.0 + 0.5));
}

Tensor hardswish(const Tensor& x) {
  check_floating("hardswish", x);
  // The middle branch covers both ends, where PyTorch's hardswish_backward takes x / 3 + 1/2.
  return where(x < -3.0, 0.0, where(x <= 3.0, x * (x + 3.0) / 6.0, x));
}

Tensor mish(const Tensor& x) {
  check_floating("mish", x);
  return x * softplus(x).tanh();
}

Tensor logsigmoid(const Tensor& x) {
  check_floating("logsigmoid", x);
  return -softplus(-x);
}

Tensor normalize(const Tensor& x, double p, std::int64_t dim, double eps) {
  check_floating("normalize", x);
  return x / x.norm(p, {dim}, /*keepdim=*/true).clamp(eps);
}

}  // namespace hwaro::nn::functional
