// Composite reductions built from the primitives and elementwise ops (so autograd derives their
// gradients): var, std, norm and logsumexp. 16-bit float inputs are computed in float32 and the
// result narrowed once, as PyTorch does internally.
#include <cmath>
#include <limits>

#include "hwaro/ops.h"
#include "ops/op_helpers.h"
#include "ops/reduction_layout.h"

namespace hwaro {

namespace {

DType compute_dtype(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float32 : dt; }

// s^(1/order) (the square root for order 2) of a non-negative sum, with PyTorch's gradient of 0
// where s is 0 (norm_backward and std_backward mask it): the root's own derivative is infinite
// there, and times the zero gradient of the sum's terms it would be NaN. The root is taken of 1
// where s is 0, so neither branch of the outer where has an infinite derivative.
Tensor root_with_zero_gradient_at_zero(const Tensor& s, double order) {
  const Tensor is_zero = s == 0;
  const Tensor safe = where(is_zero, 1.0, s);
  return where(is_zero, 0.0, order == 2.0 ? safe.sqrt() : safe.pow(1.0 / order));
}

}  // namespace

Tensor Tensor::var(IntArrayRef dims, std::int64_t correction, bool keepdim) const {
  ops::check_defined("var", {{"self", *this}});
  HWARO_CHECK(is_floating_point(), "var(): std and var only support floating point and complex dtypes, got ", dtype(),
              "; convert it with .to(hw::kFloat32) first");
  const std::int64_t count = ops::reduction_count("var", *this, dims);
  const Tensor x = to(compute_dtype(dtype()));
  const Tensor centred = x - x.mean(dims, /*keepdim=*/true);
  // max(0, N - correction) as torch: too few elements give inf (or NaN for 0 / 0).
  const double denom = static_cast<double>(std::max<std::int64_t>(0, count - correction));
  return (centred * centred).sum(dims, keepdim).div(denom).to(dtype());
}

Tensor Tensor::std(IntArrayRef dims, std::int64_t correction, bool keepdim) const {
  ops::check_defined("std", {{"self", *this}});
  HWARO_CHECK(is_floating_point(), "std(): std and var only support floating point and complex dtypes, got ", dtype(),
              "; convert it with .to(hw::kFloat32) first");
  return root_with_zero_gradient_at_zero(to(compute_dtype(dtype())).var(dims, correction, keepdim), 2.0).to(dtype());
}

// torch.linalg.vector_norm: p = 2, 1, inf, -inf, 0 (the count of non-zeros) or any other p.
Tensor Tensor::norm(const Scalar& p, IntArrayRef dims, bool keepdim) const {
  ops::check_defined("norm", {{"self", *this}});
  HWARO_CHECK(is_floating_point(), "norm(): Expected a floating point tensor as input. Got ", dtype(),
              "; convert it with .to(hw::kFloat32) first");
  ops::reduction_out_sizes("norm", *this, dims, keepdim);  // checks dims before any work
  const double order = p.to_double();
  const Tensor x = to(compute_dtype(dtype()));
  Tensor out;
  if (order == 2.0) {
    out = root_with_zero_gradient_at_zero((x * x).sum(dims, keepdim), 2.0);
  } else if (order == 1.0) {
    out = x.abs().sum(dims, keepdim);
  } else if (std::isinf(order)) {
    out = order > 0 ? x.abs().amax(dims, keepdim) : x.abs().amin(dims, keepdim);
  } else if (order == 0.0) {
    // The count of non-zeros, with PyTorch's gradient, 0: the term on x (0 times its finite
    // values) only connects the graph.
    const Tensor finite = where((x - x).eq(0), x, 0.0);
    out = x.ne(0).sum(dims, keepdim, x.dtype()) + (finite * 0.0).sum(dims, keepdim);
  } else {
    // For 0 < p < 1, |x|^p has an infinite slope at 0; PyTorch's gradient there is 0, so zeros
    // are left out of the pow (a 1 stands in) rather than give 0 * inf = NaN. For a negative p
    // the sum is 0 only when every element is infinite, and PyTorch's norm is then 0^(1/p) = inf:
    // the plain root.
    Tensor powered;
    if (order > 0 && order < 1) {
      const Tensor nonzero = x.ne(0);
      powered = where(nonzero, where(nonzero, x, 1.0).abs().pow(order), 0.0);
    } else {
      powered = x.abs().pow(order);
    }
    const Tensor sum = powered.sum(dims, keepdim);
    out = order > 0 ? root_with_zero_gradient_at_zero(sum, order) : sum.pow(1.0 / order);
  }
  return out.to(dtype());
}

// log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the maximum (0 where it is
// infinite, so that all -inf gives -inf and +inf gives +inf rather than NaN, as PyTorch).
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  ops::check_defined("logsumexp", {{"self", x}});
  const DimVector out_sizes = ops::reduction_out_sizes("logsumexp", x, dims, keepdim);
  // Integers give float32, as torch.logsumexp.
  const DType result = x.is_floating_point() ? x.dtype() : DType::Float32;
  if (ops::reduction_count("logsumexp", x, dims) == 0) {
    return full(out_sizes.ref(), -std::numeric_limits<double>::infinity(), {.dtype = result, .device = x.device()});
  }
  const Tensor xc = x.to(compute_dtype(result));
  Tensor m = xc.amax(dims, /*keepdim=*/true);
  m = m.masked_fill(m.abs() == std::numeric_limits<double>::infinity(), 0);
  Tensor out = (xc - m).exp().sum(dims, /*keepdim=*/true).log() + m;
  return out.reshape(out_sizes.ref()).to(result);
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const { return hwaro::logsumexp(*this, dims, keepdim); }

}  // namespace hwaro
