// Tensor's autograd methods (declared in hwaro/tensor.h): requires_grad, grad, grad_fn,
// retain_grad, backward and set_data.
#include <memory>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"

namespace hwaro {

Tensor& Tensor::set_requires_grad(bool value) {
  HWARO_CHECK(defined(), "requires_grad_(): this tensor is undefined (default-constructed)");
  HWARO_CHECK(!value || is_floating_point(), "only tensors of floating point dtype can require gradients, got ",
              dtype());
  // As PyTorch's: a computed tensor already requires grad, so asking for it again changes nothing.
  HWARO_CHECK(is_leaf() || value, "you can only change requires_grad of leaf tensors; to use a computed tensor ",
              "without its graph, take t.detach()");
  if (is_leaf()) impl()->set_requires_grad(value);
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  HWARO_CHECK(defined(), "grad(): this tensor is undefined (default-constructed)");
  const autograd::AutogradMeta* meta = autograd::meta_of(*this);
  return meta != nullptr ? meta->grad : undefined;
}

Tensor& Tensor::mutable_grad() const {
  HWARO_CHECK(defined(), "mutable_grad(): this tensor is undefined (default-constructed)");
  return autograd::ensure_meta(*this).grad;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  HWARO_CHECK(defined(), "grad_fn(): this tensor is undefined (default-constructed)");
  const autograd::AutogradMeta* meta = autograd::meta_of(*this);
  return meta != nullptr ? meta->grad_fn : nullptr;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

void Tensor::retain_grad() const {
  HWARO_CHECK(requires_grad(), "retain_grad() can only be called on a tensor that requires grad");
  autograd::AutogradMeta& meta = autograd::ensure_meta(*this);
  if (is_leaf() || meta.retains_grad) return;  // leaves keep their gradient anyway
  meta.retains_grad = true;
  // The hook holds the tensor weakly: retaining a gradient must not keep the tensor alive.
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  meta.grad_fn->add_pre_hook([weak](const Tensor& grad) {
    if (std::shared_ptr<TensorImpl> impl = weak.lock()) autograd::accumulate_into(Tensor(impl), grad);
  });
}

bool Tensor::retains_grad() const {
  const autograd::AutogradMeta* meta = autograd::meta_of(*this);
  return meta != nullptr && meta->retains_grad;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{},
                     retain_graph);
}

void Tensor::set_data(const Tensor& new_data) const {
  HWARO_CHECK(defined() && new_data.defined(), "set_data(): both tensors must be defined");
  // Gradients are floating point only; integer data under requires_grad would break backward later, far from here.
  HWARO_CHECK(!requires_grad() || new_data.is_floating_point(), "set_data(): this tensor requires grad, so its new ",
              "data must be floating point, got ", new_data.dtype(), "; call requires_grad_(false) first");
  impl()->set_data(*new_data.impl());
}

}  // namespace hwaro
