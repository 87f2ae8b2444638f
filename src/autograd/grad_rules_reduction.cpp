// Gradient rules of the reductions: sum, prod, amax/amin (ties share the gradient), softmax and
// log_softmax.
#include "autograd/grad_rules.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

std::vector<Tensor> sum_rule(const SavedCall& c, const Tensor& g) {
  return {expand_reduced(g, c.input_sizes(0), c.ints.ref(), c.flag)};
}

// d prod / d x_i is the product of the other elements of its slice: out / x_i when the slice
// has no zero; when it has one, only that zero gets the product of the others; with two or
// more, every element's is 0. (Dividing the product by x_i would give NaN at zeros.)
std::vector<Tensor> prod_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& x = c.input(0);
  const IntArrayRef dims = c.ints.ref();
  const Tensor is_zero = x == 0;
  const Tensor nonzero = where(is_zero, 1.0, x);
  const Tensor nonzero_product = dims.empty() ? nonzero.prod() : nonzero.prod(dims[0], /*keepdim=*/true);
  const Tensor zeros = dims.empty() ? is_zero.sum() : is_zero.sum(dims, /*keepdim=*/true);
  const Tensor others = where(is_zero, where(zeros == 1, nonzero_product, 0.0),
                              where(zeros == 0, nonzero_product / nonzero, 0.0));
  return {expand_reduced(g, x.sizes(), dims, c.flag) * others};
}

std::vector<Tensor> extremum_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& x = c.input(0);
  const Tensor out = expand_reduced(c.output, x.sizes(), c.ints.ref(), c.flag);
  // Where the extremum is NaN its winners are the NaNs (x == NaN holds nowhere, and the count
  // would be 0), as PyTorch's evenly_distribute_backward.
  const Tensor winners = where(out.ne(out), x.ne(x), x == out).to(g.dtype());
  const IntArrayRef dims = c.ints.ref();
  // Every dim when none were given, as the forward reduced them all.
  const Tensor count = winners.sum(dims, /*keepdim=*/true);
  return {winners * expand_reduced(g, x.sizes(), dims, c.flag) / count};
}

std::vector<Tensor> softmax_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& y = c.output;
  const std::int64_t d = c.ints[0];
  return {y * (g - (g * y).sum({d}, /*keepdim=*/true))};
}

std::vector<Tensor> log_softmax_rule(const SavedCall& c, const Tensor& g) {
  const std::int64_t d = c.ints[0];
  return {g - c.output.exp() * g.sum({d}, /*keepdim=*/true)};
}

}  // namespace

GradRule reduction_rule(ops::GradOp kind) {
  switch (kind) {
    case ops::GradOp::Sum: return sum_rule;
    case ops::GradOp::Prod: return prod_rule;
    case ops::GradOp::Extremum: return extremum_rule;
    case ops::GradOp::Softmax: return softmax_rule;
    default: return log_softmax_rule;
  }
}

}  // namespace hwaro::autograd
