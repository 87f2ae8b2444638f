#include "autograd/accumulate_grad.h"

#include "autograd/autograd_meta.h"

namespace hwaro::autograd {

namespace {

// True when two elements of t share one memory location (a broadcast view: stride 0 on a dim
// longer than 1), so that an in-place add into t would write each location several times.
bool has_internal_overlap(const Tensor& t) {
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  }
  return false;
}

}  // namespace

void accumulate_into(const Tensor& t, const Tensor& grad) {
  NoGradGuard no_grad;
  AutogradMeta& meta = ensure_meta(t);
  HWARO_CHECK(grad.sizes() == t.sizes(), "backward: the gradient for a tensor of shape ", t.sizes(),
              " has shape ", grad.sizes());
  const Tensor g = grad.to(t.device(), t.dtype());
  if (!meta.grad.defined()) {
    // A copy: the incoming gradient may be a broadcast view or shared with another node.
    meta.grad = g.clone();
  } else if (has_internal_overlap(meta.grad)) {
    // A .grad the user set to a broadcast view cannot hold the sum in place: it is replaced.
    meta.grad = meta.grad + g;
  } else {
    meta.grad.add_(g);
  }
}

std::vector<Tensor> AccumulateGrad::apply(const Tensor& grad_output) {
  accumulate_into(leaf_, grad_output);
  return {};
}

}  // namespace hwaro::autograd
