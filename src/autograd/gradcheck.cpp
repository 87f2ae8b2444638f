// gradcheck: backward's vector-Jacobian product against central differences.
#include <cmath>
#include <sstream>

#include "hwaro/autograd.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

// The address of element `flat` (row-major order) of a strided CPU tensor.
double* element(const Tensor& t, std::int64_t flat) {
  std::int64_t offset = 0;
  for (std::int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += (flat % t.size(d)) * t.stride(d);
    flat /= t.size(d);
  }
  return static_cast<double*>(t.data_ptr()) + offset;
}

double projected(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                 const Tensor& v) {
  NoGradGuard no_grad;
  return (fn(inputs).to(kFloat64) * v).sum().item<double>();
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, double eps, double atol, double rtol) {
  for (const Tensor& x : inputs) {
    HWARO_CHECK(x.dtype() == kFloat64 && x.is_cpu(), "gradcheck: inputs must be float64 CPU tensors, got ", x.dtype(),
                " on ", x.device(), "; finite differences in lower precision are too noisy to judge a gradient");
  }
  for (const Tensor& x : inputs) {
    if (x.requires_grad()) x.mutable_grad() = Tensor();
  }
  const Tensor out = fn(inputs);
  HWARO_CHECK(out.requires_grad(), "gradcheck: the function's output does not require grad");
  const Tensor v = randn(out.sizes(), {.dtype = kFloat64});
  (out.to(kFloat64) * v).sum().backward();

  GradcheckResult result;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.requires_grad()) continue;
    const Tensor analytic = x.grad().defined() ? x.grad().contiguous() : zeros_like(x);
    const double* a = analytic.data_ptr<double>();
    for (std::int64_t k = 0; k < x.numel(); ++k) {
      double* p = element(x, k);
      const double saved = *p;
      *p = saved + eps;
      const double plus = projected(fn, inputs, v);
      *p = saved - eps;
      const double minus = projected(fn, inputs, v);
      *p = saved;
      const double numeric = (plus - minus) / (2 * eps);
      const double excess = std::abs(a[k] - numeric) - (atol + rtol * std::abs(numeric));
      if (excess > result.max_error || std::isnan(a[k]) != std::isnan(numeric)) {
        result.ok = false;
        result.max_error = std::isnan(excess) ? INFINITY : excess;
        std::ostringstream where;
        where << "input " << i << " (shape " << x.sizes() << "), element " << k << ": backward gives " << a[k]
              << ", finite differences give " << numeric;
        result.message = where.str();
      }
    }
  }
  return result;
}

}  // namespace hwaro::autograd
