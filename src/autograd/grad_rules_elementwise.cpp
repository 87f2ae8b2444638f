// Gradient rules of the elementwise ops: unary (by kernel), binary (with broadcasting summed
// back to each input's shape), where and masked_fill.
#include <cmath>

#include "autograd/grad_rules.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;

Tensor as_float(const Tensor& mask, const Tensor& like) { return mask.to(like.dtype()); }

// d gelu / dx: Phi(x) + x phi(x) exactly, or the derivative of the tanh approximation.
Tensor gelu_derivative(const Tensor& x, const Tensor& out, bool tanh_approximation) {
  if (tanh_approximation) {
    const Tensor inner = (x + x * x * x * kGeluCubic) * kSqrt2OverPi;
    const Tensor t = inner.tanh();
    const Tensor dinner = (x * x * (3 * kGeluCubic) + 1) * kSqrt2OverPi;
    return (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * dinner;
  }
  // Phi(x) = gelu(x) / x (and 1/2 at 0): the forward's value, with no erf op needed.
  const Tensor phi = where(x == 0, 0.5, out / x);
  return phi + x * (x * x * -0.5).exp() * kInvSqrt2Pi;
}

Tensor unary_grad(const SavedCall& c, const Tensor& g) {
  const Tensor& x = c.input(0);
  const Tensor& y = c.output;
  switch (c.op) {
    case OpId::Neg: return -g;
    case OpId::Abs: return g * (as_float(x > 0, g) - as_float(x < 0, g));
    case OpId::Exp: return g * y;
    case OpId::Expm1: return g * (y + 1);
    case OpId::Log: return g / x;
    case OpId::Log1p: return g / (x + 1);
    case OpId::Sqrt: return g / (y * 2);
    case OpId::Rsqrt: return g * y * y * y * -0.5;
    case OpId::Tanh: return g * (1 - y * y);
    case OpId::Sigmoid: return g * y * (1 - y);
    case OpId::Relu: return g.masked_fill(y <= 0, 0);
    case OpId::Silu: {
      const Tensor s = x.sigmoid();
      return g * s * (x * (1 - s) + 1);
    }
    case OpId::Gelu: return g * gelu_derivative(x, y, c.ints[0] == 1);
    case OpId::Clamp: {
      // The gradient passes where min <= x <= max, as PyTorch's.
      Tensor pass = ones_like(x, {.dtype = kBool, .device = x.device()});
      if (c.ints[0] & 1) pass = pass && (x >= c.reals[0]);
      if (c.ints[0] & 2) pass = pass && (x <= c.reals[1]);
      return g * as_float(pass, g);
    }
    case OpId::PowScalar: {
      const double p = c.reals[0];
      if (p == 0.0) return zeros_like(g);
      return g * x.pow(p - 1) * p;
    }
    default: HWARO_CHECK(false, "no gradient rule for the unary op ", op_name(c.op));
  }
  return {};
}

// Gradients of a and b at the broadcast shape; summed to their shapes by the caller.
std::pair<Tensor, Tensor> binary_grads(const SavedCall& c, const Tensor& g) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  const double alpha = c.reals[0];
  switch (c.op) {
    case OpId::Add: return {g, alpha == 1.0 ? g : g * alpha};
    case OpId::Sub: return {g, g * -alpha};
    case OpId::Mul: return {c.needs_grad[0] ? g * b : Tensor(), c.needs_grad[1] ? g * a : Tensor()};
    case OpId::Div: return {c.needs_grad[0] ? g / b : Tensor(), c.needs_grad[1] ? -g * c.output / b : Tensor()};
    case OpId::Pow: {
      Tensor ga, gb;
      // d/da a^b = b a^(b-1), taken as 0 where b == 0 (a^0 is constant; at a == 0 the formula
      // gives 0 * inf = NaN), as PyTorch.
      if (c.needs_grad[0]) ga = (g * b * a.pow(b - 1)).masked_fill(b == 0, 0);
      // d/db a^b = a^b log a; taken as 0 where a == 0 and b >= 0 (the limit), as PyTorch.
      if (c.needs_grad[1]) gb = (g * c.output * a.log()).masked_fill((a == 0) && (b >= 0), 0);
      return {ga, gb};
    }
    case OpId::Maximum:
    case OpId::Minimum: {
      // As PyTorch's: the loser gets none, a tie splits it evenly, and where either is NaN (no
      // loser, no tie) both get all of it.
      const bool maximum = c.op == OpId::Maximum;
      const Tensor half_tie = as_float(a == b, g) * 0.5;
      const Tensor ga = g * (1.0 - as_float(maximum ? a < b : a > b, g) - half_tie);
      const Tensor gb = g * (1.0 - as_float(maximum ? a > b : a < b, g) - half_tie);
      return {ga, gb};
    }
    default: HWARO_CHECK(false, "no gradient rule for the binary op ", op_name(c.op));
  }
  return {};
}

std::vector<Tensor> unary_rule(const SavedCall& c, const Tensor& g) { return {unary_grad(c, g)}; }

std::vector<Tensor> binary_rule(const SavedCall& c, const Tensor& g) {
  auto [ga, gb] = binary_grads(c, g);
  return {c.needs_grad[0] ? sum_to(ga, c.input_sizes(0)) : Tensor(),
          c.needs_grad[1] ? sum_to(gb, c.input_sizes(1)) : Tensor()};
}

std::vector<Tensor> where_rule(const SavedCall& c, const Tensor& g) {
  const Tensor& condition = c.saved[0];
  return {c.needs_grad[0] ? sum_to(g.masked_fill(!condition, 0), c.input_sizes(0)) : Tensor(),
          c.needs_grad[1] ? sum_to(g.masked_fill(condition, 0), c.input_sizes(1)) : Tensor()};
}

std::vector<Tensor> masked_fill_rule(const SavedCall& c, const Tensor& g) { return {g.masked_fill(c.saved[0], 0)}; }

}  // namespace

GradRule elementwise_rule(ops::GradOp kind) {
  switch (kind) {
    case ops::GradOp::Unary: return unary_rule;
    case ops::GradOp::Binary: return binary_rule;
    case ops::GradOp::Where: return where_rule;
    default: return masked_fill_rule;
  }
}

}  // namespace hwaro::autograd
