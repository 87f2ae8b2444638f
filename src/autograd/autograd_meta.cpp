#include "autograd/autograd_meta.h"

#include "autograd/accumulate_grad.h"

namespace hwaro::autograd {

AutogradMeta* meta_of(const Tensor& t) { return static_cast<AutogradMeta*>(t.impl()->autograd_meta()); }

AutogradMeta& ensure_meta(const Tensor& t) {
  if (t.impl()->autograd_meta() == nullptr) t.impl()->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *meta_of(t);
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  AutogradMeta& meta = ensure_meta(t);
  if (meta.grad_fn) return {meta.grad_fn, 0};
  std::shared_ptr<Node> accumulator = meta.grad_accumulator.lock();
  if (!accumulator) {
    accumulator = std::make_shared<AccumulateGrad>(t);
    meta.grad_accumulator = accumulator;
  }
  return {accumulator, 0};
}

}  // namespace hwaro::autograd
