#include "autograd/accumulate_grad.h"

#include "autograd/autograd_meta.h"
#include "ops/op_helpers.h"

namespace hwaro::autograd {

void check_grad_slot(const Tensor& t) {
  const Tensor& grad = t.grad();
  if (!grad.defined()) return;
  HWARO_CHECK_AS(DeviceMismatchError, grad.device() == t.device(), "backward: a leaf of shape ", t.sizes(), " on ",
                 t.device(), " has a .grad on ", grad.device(), ", set through mutable_grad(); a .grad must be on ",
                 "its tensor's device: move it there, or reset it with mutable_grad() = hw::Tensor()");
  HWARO_CHECK(grad.sizes() == t.sizes(), "backward: a leaf of shape ", t.sizes(), " has a .grad of shape ",
              grad.sizes(), ", set through mutable_grad(); a .grad must have its tensor's shape");
}

void accumulate_into(const Tensor& t, const Tensor& grad) {
  NoGradGuard no_grad;
  AutogradMeta& meta = ensure_meta(t);
  HWARO_CHECK(grad.sizes() == t.sizes(), "backward: the gradient for a tensor of shape ", t.sizes(),
              " has shape ", grad.sizes());
  const Tensor g = grad.to(t.device(), t.dtype());
  if (!meta.grad.defined()) {
    // A copy: the incoming gradient may be a broadcast view or shared with another node.
    meta.grad = g.clone();
  } else if (ops::internal_overlap_dim(meta.grad) >= 0) {
    // A .grad the user set to a broadcast view cannot hold the sum in place: it is replaced.
    meta.grad = meta.grad + g;
  } else {
    meta.grad.add_(g);
  }
}

std::vector<Tensor> AccumulateGrad::apply(const Tensor& grad_output) {
  // As PyTorch's: a leaf whose requires_grad was turned off after the forward gets no .grad.
  if (leaf_.requires_grad()) accumulate_into(leaf_, grad_output);
  return {};
}

}  // namespace hwaro::autograd
