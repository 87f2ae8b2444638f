// Gradient rules of the 2-D window primitives: im2col and col2im are each other's adjoint, and
// max pooling sends each output's gradient to the element that won its window (a scatter-add,
// since overlapping windows may share a winner). The direct convolution's gradients are its
// backend's two backward kernels, run only for the inputs that need them.
#include "autograd/grad_rules.h"
#include "hwaro/ops.h"
#include "ops/convolution.h"
#include "ops/windows.h"

namespace hwaro::autograd {

namespace {

std::vector<Tensor> im2col_rule(const SavedCall& c, const Tensor& g) { return {ops::col2im_from_ints(g, c.ints)}; }

std::vector<Tensor> col2im_rule(const SavedCall& c, const Tensor& g) { return {ops::im2col_from_ints(g, c.ints)}; }

std::vector<Tensor> max_pool2d_rule(const SavedCall& c, const Tensor& g) {
  const IntArrayRef x_sizes = c.input_sizes(0);
  const Tensor& indices = c.saved[0];
  const std::int64_t planes = x_sizes[0] * x_sizes[1];
  // Sizes given, not -1, which an empty batch (planes = 0) would leave undetermined.
  const std::int64_t outputs = indices.size(2) * indices.size(3);
  const Tensor flat_index = indices.reshape({planes, outputs});
  const Tensor grad_planes = zeros({planes, x_sizes[2] * x_sizes[3]}, {.dtype = g.dtype(), .device = g.device()});
  return {grad_planes.scatter_add(1, flat_index, g.reshape({planes, outputs})).reshape(x_sizes)};
}

// inputs x, weight[, bias]; the kernels write fresh tensors, so nothing is recorded for them. x is
// held only for the weight's and bias's gradients, the weight only for x's.
std::vector<Tensor> conv2d_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& x = c.input(0);
  const Tensor& weight = c.input(1);
  const bool bias_needs_grad = c.inputs.size() == 3 && c.needs_grad[2];
  std::vector<Tensor> grads(c.inputs.size());
  if (c.needs_grad[0]) grads[0] = ops::conv2d_backward_input(g, weight, c.input_sizes(0), c.ints);
  if (c.needs_grad[1] || bias_needs_grad) {
    ops::ConvWeightGrads w = ops::conv2d_backward_weight(x, g, c.input_sizes(1), bias_needs_grad, c.ints);
    if (c.needs_grad[1]) grads[1] = std::move(w.weight);
    if (bias_needs_grad) grads[2] = std::move(w.bias);
  }
  return grads;
}

}  // namespace

GradRule window_rule(ops::GradOp kind) {
  switch (kind) {
    case ops::GradOp::Im2col: return im2col_rule;
    case ops::GradOp::Col2im: return col2im_rule;
    case ops::GradOp::Conv2d: return conv2d_rule;
    default: return max_pool2d_rule;
  }
}

}  // namespace hwaro::autograd
