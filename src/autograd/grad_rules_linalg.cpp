// Gradient rules of matrix products: mm, bmm and addmm (matmul is built from these).
#include "autograd/grad_rules.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

std::vector<Tensor> mm_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  return {c.needs_grad[0] ? mm(g, b.t()) : Tensor(), c.needs_grad[1] ? mm(a.t(), g) : Tensor()};
}

std::vector<Tensor> bmm_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  return {c.needs_grad[0] ? bmm(g, b.transpose(1, 2)) : Tensor(),
          c.needs_grad[1] ? bmm(a.transpose(1, 2), g) : Tensor()};
}

// out = beta * self + alpha * a @ b
std::vector<Tensor> addmm_rule(const SavedCall& c, const Tensor& g) {
  const double beta = c.reals[0], alpha = c.reals[1];
  const Tensor& a = c.input(1);
  const Tensor& b = c.input(2);
  Tensor g_self, ga, gb;
  if (c.needs_grad[0]) g_self = sum_to(beta == 1.0 ? g : g * beta, c.input_sizes(0));
  if (c.needs_grad[1]) ga = alpha == 1.0 ? mm(g, b.t()) : mm(g, b.t()) * alpha;
  if (c.needs_grad[2]) gb = alpha == 1.0 ? mm(a.t(), g) : mm(a.t(), g) * alpha;
  return {g_self, ga, gb};
}

}  // namespace

GradRule linalg_rule(ops::GradOp kind) {
  switch (kind) {
    case ops::GradOp::Mm: return mm_rule;
    case ops::GradOp::Bmm: return bmm_rule;
    default: return addmm_rule;
  }
}

}  // namespace hwaro::autograd
