#pragma once
// Per-tensor autograd state, kept in TensorImpl's slot: the gradient of a leaf, the node that
// made a non-leaf, and the edge a backward follows into this tensor.
#include <cstdint>
#include <memory>

#include "core/tensor_impl.h"
#include "hwaro/autograd.h"

namespace hwaro::autograd {

struct AutogradMeta : AutogradMetaBase {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;           // null for a leaf
  std::weak_ptr<Node> grad_accumulator;    // a leaf's AccumulateGrad, shared by the graphs using it
  bool retains_grad = false;
};

// Null when the tensor has none yet.
AutogradMeta* meta_of(const Tensor& t);
AutogradMeta& ensure_meta(const Tensor& t);

// The edge a node follows to send t its gradient: t's grad_fn, or for a leaf that requires grad
// its accumulator (made on first use); an empty edge when t needs no gradient.
Edge gradient_edge(const Tensor& t);

}  // namespace hwaro::autograd
