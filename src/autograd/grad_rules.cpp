// What the gradient rules share: the dispatch by kind, and undoing broadcasts and reductions.
#include "autograd/grad_rules.h"

#include <algorithm>

#include "hwaro/ops.h"
#include "ops/op_helpers.h"

namespace hwaro::autograd {

GradRule rule_for(ops::GradOp kind) {
  using K = ops::GradOp;
  switch (kind) {
    case K::Unary:
    case K::Binary:
    case K::Where:
    case K::MaskedFill: return elementwise_rule(kind);
    case K::Sum:
    case K::Prod:
    case K::Extremum:
    case K::Softmax:
    case K::LogSoftmax: return reduction_rule(kind);
    case K::Mm:
    case K::Bmm:
    case K::Addmm: return linalg_rule(kind);
    case K::Im2col:
    case K::Col2im:
    case K::MaxPool2d:
    case K::Conv2d: return window_rule(kind);
    default: return shape_rule(kind);
  }
}

Tensor sum_to(const Tensor& grad, IntArrayRef shape) {
  if (grad.sizes() == shape) return grad;
  const std::int64_t lead = grad.dim() - static_cast<std::int64_t>(shape.size());
  DimVector dims;
  for (std::int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && grad.size(d) != 1)) dims.push_back(d);
  }
  Tensor summed = dims.empty() ? grad : grad.sum(dims, /*keepdim=*/true);
  return summed.reshape(shape);
}

Tensor expand_reduced(const Tensor& grad, IntArrayRef input_sizes, IntArrayRef dims, bool keepdim) {
  const auto ndim = static_cast<std::int64_t>(input_sizes.size());
  if (ndim == 0) return grad.reshape({});
  Tensor g = grad;
  if (!keepdim) {
    std::vector<std::int64_t> wrapped;
    if (dims.empty()) {
      for (std::int64_t d = 0; d < ndim; ++d) wrapped.push_back(d);
    } else {
      for (std::int64_t d : dims) wrapped.push_back(ops::wrap_dim(d, ndim));
    }
    std::sort(wrapped.begin(), wrapped.end());
    for (std::int64_t d : wrapped) g = g.unsqueeze(d);
  }
  return g.expand(input_sizes);
}

}  // namespace hwaro::autograd
