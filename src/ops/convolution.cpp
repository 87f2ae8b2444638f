// The direct convolution primitive (ops/convolution.h): device checks, contiguous operands,
// dispatch to the backend's Conv2d kernels, and the record for autograd.
#include "ops/convolution.h"

#include <array>
#include <initializer_list>
#include <vector>

#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

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

// The output's [oh, ow], after the checks im2col makes on the im2col path (same messages).
std::array<std::int64_t, 2> checked_output_size(const Tensor& x, const Tensor& weight, IntArrayRef stride,
                                                IntArrayRef padding, IntArrayRef dilation) {
  HWARO_CHECK(stride[0] >= 1 && stride[1] >= 1, "conv2d: stride must be at least 1, got ", stride);
  HWARO_CHECK(padding[0] >= 0 && padding[1] >= 0, "conv2d: padding must be at least 0, got ", padding);
  HWARO_CHECK(dilation[0] >= 1 && dilation[1] >= 1, "conv2d: dilation must be at least 1, got ", dilation);
  std::array<std::int64_t, 2> out{}, span{};
  for (int axis = 0; axis < 2; ++axis) {
    span[axis] = (weight.size(2 + axis) - 1) * dilation[axis] + 1;
    const std::int64_t room = x.size(2 + axis) + 2 * padding[axis] - span[axis];
    out[axis] = room < 0 ? 0 : room / stride[axis] + 1;
  }
  HWARO_CHECK(out[0] > 0 && out[1] > 0, "conv2d: the input of ", x.size(2), "x", x.size(3), " (padded by ", padding[0],
              ", ", padding[1], ") is smaller than the dilated kernel of ", span[0], "x", span[1],
              "; use a smaller kernel, more padding or a larger input");
  return out;
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
  const std::array<std::int64_t, 2> out_hw = checked_output_size(x, weight, stride, padding, dilation);
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
