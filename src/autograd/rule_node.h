#pragma once
// The node recorded for each differentiable primitive: what the op saw (inputs, its result,
// its parameters), and the gradient rule of its kind.
#include <cstdint>
#include <vector>

#include "hwaro/autograd.h"
#include "ops/grad_record.h"

namespace hwaro::autograd {

// What a rule may know of an input whose values it does not read.
struct InputMeta {
  DimVector sizes;
  DType dtype = kFloat32;
  Device device{DeviceType::CPU};
};

// What a gradient rule reads. Tensors are detached aliases of the forward's, so that the
// graph holds their values but no references back into itself. As PyTorch's saved variables,
// an input (or the output) is held only where the rule reads its values (rule_node.cpp's
// reads_input and reads_output); the others are undefined, so that a sum, a view or an addition
// does not keep a large activation alive, and every input's sizes, dtype and device stay in
// input_meta.
struct SavedCall {
  ops::GradOp kind;
  OpId op;
  std::vector<Tensor> inputs;
  std::vector<InputMeta> input_meta;
  std::vector<Tensor> saved;
  Tensor output;
  DimVector ints;
  double reals[4];
  bool flag;
  std::vector<bool> needs_grad;  // per input

  const Tensor& input(std::size_t i) const { return inputs[i]; }
  IntArrayRef input_sizes(std::size_t i) const { return input_meta[i].sizes.ref(); }
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

  // Whether the rule keeps any tensor: a node that keeps none (an addition, a sum, a view) can be
  // gone through again after its graph was released, as in PyTorch.
  bool holds_tensors() const;

  SavedCall call_;
  std::vector<std::uint32_t> versions_;  // of inputs, then saved, then the output
  bool released_ = false;
};

}  // namespace hwaro::autograd
