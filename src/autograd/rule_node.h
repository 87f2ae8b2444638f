#pragma once
// The node recorded for each differentiable primitive: what the op saw (inputs, its result,
// its parameters), and the gradient rule of its kind.
#include <cstdint>
#include <vector>

#include "hwaro/autograd.h"
#include "ops/grad_record.h"

namespace hwaro::autograd {

// What a gradient rule reads. Tensors are detached aliases of the forward's, so that the
// graph holds their values but no references back into itself.
struct SavedCall {
  ops::GradOp kind;
  OpId op;
  std::vector<Tensor> inputs;
  std::vector<Tensor> saved;
  Tensor output;
  DimVector ints;
  double reals[4];
  bool flag;
  std::vector<bool> needs_grad;  // per input

  const Tensor& input(std::size_t i) const { return inputs[i]; }
};

// Gradients of the inputs (one per input; undefined where needs_grad is false) from the
// gradient of the output.
using GradRule = std::vector<Tensor> (*)(const SavedCall& call, const Tensor& grad);

class RuleNode : public Node {
 public:
  RuleNode(ops::GradCall&& call, const Tensor& output);
  std::string name() const override;
  std::vector<Tensor> apply(const Tensor& grad_output) override;
  void release_saved() override;

 private:
  // PyTorch's error when a saved tensor was changed in place after the forward.
  void check_versions() const;

  SavedCall call_;
  std::vector<std::uint32_t> versions_;  // of inputs, then saved, then the output
  bool released_ = false;
};

}  // namespace hwaro::autograd
