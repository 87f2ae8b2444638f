#pragma once
// The gradient rule of each differentiable primitive, by family (one .cpp file each), and the
// helpers they share.
#include "autograd/rule_node.h"

namespace hwaro::autograd {

GradRule elementwise_rule(ops::GradOp kind);  // Unary, Binary, Where, MaskedFill
GradRule reduction_rule(ops::GradOp kind);    // Sum, Extremum, Softmax, LogSoftmax
GradRule linalg_rule(ops::GradOp kind);       // Mm, Bmm, Addmm
GradRule shape_rule(ops::GradOp kind);        // views, Cat, Convert, indexing
GradRule window_rule(ops::GradOp kind);       // Im2col, Col2im, MaxPool2d, Conv2d
GradRule rule_for(ops::GradOp kind);

// The gradient of a broadcast result summed back to an input's shape.
Tensor sum_to(const Tensor& grad, IntArrayRef shape);
// The gradient of a reduction over dims (empty: all) seen again at the input's shape.
Tensor expand_reduced(const Tensor& grad, IntArrayRef input_sizes, IntArrayRef dims, bool keepdim);

}  // namespace hwaro::autograd
