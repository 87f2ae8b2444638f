#pragma once
// The node at the end of every path: adds the gradient that reaches a leaf into its .grad().
#include "hwaro/autograd.h"

namespace hwaro::autograd {

// Refuses a .grad that the gradient of t cannot be added into: one set through mutable_grad()
// on another device or with another shape (PyTorch's setter of .grad refuses those).
void check_grad_slot(const Tensor& t);

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { set_sequence_nr(kAsSoonAsReady); }
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad_output) override;
  void check_before_backward() const override { check_grad_slot(leaf_); }

 private:
  Tensor leaf_;
};

// grad into the .grad() of t: a fresh copy the first time, an in-place add after (no graph).
void accumulate_into(const Tensor& t, const Tensor& grad);

}  // namespace hwaro::autograd
