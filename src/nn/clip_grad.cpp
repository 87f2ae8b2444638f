// Gradient clipping, as torch.nn.utils: clip_grad_norm_ (the joint norm of all gradients,
// accumulated in float64, and one in-place scale of every gradient when it exceeds max_norm) and
// clip_grad_value_ (an in-place clamp of each gradient element).
#include <algorithm>
#include <cmath>

#include "hwaro/autograd.h"
#include "hwaro/errors.h"
#include "hwaro/nn/utils.h"

namespace hwaro::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  HWARO_CHECK(max_norm >= 0, "clip_grad_norm_: expected max_norm >= 0, found ", max_norm);
  HWARO_CHECK(norm_type > 0, "clip_grad_norm_: expected norm_type > 0 (or INFINITY), found ", norm_type);
  NoGradGuard no_grad;
  const bool inf_norm = std::isinf(norm_type);
  double acc = 0;
  for (const Tensor& p : params) {
    if (!p.defined() || !p.grad().defined()) continue;
    Tensor g = p.grad().to(kFloat64).abs();
    if (g.numel() == 0) continue;
    if (inf_norm) {
      // NaN-propagating, as torch.linalg.vector_norm's max: std::max(acc, NaN) would keep acc.
      const double m = g.max().item<double>();
      if (std::isnan(m) || m > acc) acc = m;
    } else
      acc += g.pow(norm_type).sum().item<double>();
  }
  const double total = inf_norm ? acc : std::pow(acc, 1.0 / norm_type);
  HWARO_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_: the total norm of order ", norm_type,
              " of the gradients is ", total, ", so it cannot be clipped (no gradient was changed); pass ",
              "error_if_nonfinite = false to scale the gradients by the non-finite norm anyway");
  // The 1e-6 keeps the scale finite for a zero norm, as PyTorch does. As PyTorch's clamp(max=1), a
  // NaN scale (a NaN norm) is kept and scales every gradient (!(scale >= 1), not scale < 1).
  const double scale = max_norm / (total + 1e-6);
  if (!(scale >= 1))
    for (const Tensor& p : params)
      if (p.defined() && p.grad().defined()) p.mutable_grad().mul_(scale);
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  HWARO_CHECK(clip_value >= 0, "clip_grad_value_: expected clip_value >= 0, found ", clip_value,
              " (a negative value would set every gradient to it)");
  NoGradGuard no_grad;
  for (const Tensor& p : params)
    if (p.defined() && p.grad().defined()) p.mutable_grad().clamp_(-clip_value, clip_value);
}

}  // namespace hwaro::nn::utils
