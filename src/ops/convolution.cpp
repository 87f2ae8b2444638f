// The direct convolution primitive (ops/convolution.h): device checks, contiguous operands,
// dispatch to the backend's Conv2d kernels, and the record for autograd.
#include "ops/convolution.h"

#include <initializer_list>
#include <vector>

#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"
#include "ops/windows.h"

namespace hwaro::ops {
namespace {

// Runs `op` on tensors (outputs first, as op_id.h lists them; an undefined one is passed as a
// null view, the kernels' "none") with the window ints, in the dtype and on the device of the
// first output, which is always defined and shares them with the inputs.
void launch_conv(OpId op, std::initializer_list<const Tensor*> tensors, IntArrayRef ints) {
  KernelArgs args;
  for (const Tensor* t : tensors) {
    if (t->defined()) args.tensors[args.num_tensors] = view_of(*t);
    ++args.num_tensors;
  }
  for (std::size_t i = 0; i < ints.size(); ++i) args.ints[i] = ints[i];
  const Tensor& out = **tensors.begin();
  launch(op, out.dtype(), out.device(), args);
}

}  // namespace

bool has_direct_conv2d(const Tensor& x) { return has_kernel(OpId::Conv2d, x.dtype(), x.device()); }

Tensor conv2d_direct(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                     IntArrayRef dilation, std::int64_t groups) {
  if (bias.defined()) {
    check_same_device("conv2d", {{"input", x}, {"weight", weight}, {"bias", bias}});
  } else {
    check_same_device("conv2d", {{"input", x}, {"weight", weight}});
  }
  // The same checks and messages as im2col's on the im2col path.
  const Window window = make_window("conv2d", {weight.size(2), weight.size(3)}, dilation, padding, stride);
  const WindowPair out_hw = output_size("conv2d", window, x.size(2), x.size(3));
  const DimVector ints = {stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1], groups};
  std::vector<Tensor> differentiable = {x, weight};
  if (bias.defined()) differentiable.push_back(bias);
  GradScope grad(differentiable);
  const Tensor in = x.contiguous(), w = weight.contiguous(), b = bias.defined() ? bias.contiguous() : Tensor();
  Tensor out = new_tensor({x.size(0), weight.size(0), out_hw[0], out_hw[1]}, x.dtype(), x.device());
  launch_conv(OpId::Conv2d, {&out, &in, &w, &b}, ints);
  if (grad.active()) {
    grad.record(out, {.kind = GradOp::Conv2d, .inputs = std::move(differentiable), .ints = ints});
  }
  return out;
}

Tensor conv2d_backward_input(const Tensor& grad_out, const Tensor& weight, IntArrayRef input_sizes, IntArrayRef ints) {
  const Tensor g = grad_out.contiguous(), w = weight.contiguous();
  Tensor grad_x = new_tensor(input_sizes, grad_out.dtype(), grad_out.device());
  launch_conv(OpId::Conv2dBackwardInput, {&grad_x, &g, &w}, ints);
  return grad_x;
}

ConvWeightGrads conv2d_backward_weight(const Tensor& x, const Tensor& grad_out, IntArrayRef weight_sizes,
                                       bool with_bias, IntArrayRef ints) {
  const Tensor in = x.contiguous(), g = grad_out.contiguous();
  ConvWeightGrads grads{new_tensor(weight_sizes, x.dtype(), x.device()),
                        with_bias ? new_tensor({weight_sizes[0]}, x.dtype(), x.device()) : Tensor()};
  launch_conv(OpId::Conv2dBackwardWeight, {&grads.weight, &grads.bias, &in, &g}, ints);
  return grads;
}

}  // namespace hwaro::ops
