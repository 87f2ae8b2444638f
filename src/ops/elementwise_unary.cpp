// Unary elementwise ops: neg, abs, exp, expm1, log, log1p, sqrt, rsqrt, tanh, sigmoid, relu, gelu, silu,
// clamp and logical_not, as free functions and Tensor methods (in-place forms included).
// Float-only functions give float32 for integer and bool inputs, as PyTorch.
#include "hwaro/ops.h"
#include "ops/elementwise.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

Tensor run(OpId op, const char* name, const Tensor& x, DType dt) {
  KernelArgs args;
  return ops::unary(op, name, x, dt, dt, args);
}
Tensor& run_(OpId op, const char* name, Tensor& self, DType dt) {
  KernelArgs args;
  return ops::unary_(op, name, self, dt, args);
}

DType float_of(const char* name, const Tensor& x) {
  ops::check_defined(name, {{"self", x}});
  return ops::float_result(x.dtype());
}

void check_not_bool(const char* name, const Tensor& x) {
  ops::check_defined(name, {{"self", x}});
  HWARO_CHECK(x.dtype() != DType::Bool, name, ": negation, the `-` operator, on a bool tensor is not supported; ",
              "if you are trying to invert a mask, use the `!` operator or logical_not() instead");
}

KernelArgs gelu_args(bool tanh_approximation) {
  KernelArgs args;
  args.ints[0] = tanh_approximation ? 1 : 0;
  return args;
}

// The result dtype of clamp and its kernel arguments (ints[0] bit 0: min, bit 1: max).
DType clamp_setup(const char* name, const Tensor& x, const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi, KernelArgs& args) {
  ops::check_defined(name, {{"self", x}});
  HWARO_CHECK(lo.has_value() || hi.has_value(), name, ": at least one of 'min' or 'max' must be given");
  DType dt = x.dtype();
  if (lo) dt = promote_types(dt, hwaro::result_type(x.dtype(), *lo));
  if (hi) dt = promote_types(dt, hwaro::result_type(x.dtype(), *hi));
  HWARO_CHECK(dt != DType::Bool, name, ": not supported for bool tensors; convert with .to(kInt64) first");
  args.ints[0] = (lo ? 1 : 0) | (hi ? 2 : 0);
  args.scalars[0] = lo ? lo->to_double() : 0.0;
  args.scalars[1] = hi ? hi->to_double() : 0.0;
  return dt;
}

}  // namespace

// Functions that keep integer dtypes (relu of an int tensor is an int tensor).
Tensor neg(const Tensor& x) {
  check_not_bool("neg", x);
  return run(OpId::Neg, "neg", x, x.dtype());
}
Tensor abs(const Tensor& x) {
  ops::check_defined("abs", {{"self", x}});
  return run(OpId::Abs, "abs", x, x.dtype());
}
Tensor relu(const Tensor& x) {
  ops::check_defined("relu", {{"self", x}});
  HWARO_CHECK(x.dtype() != DType::Bool, "relu: not supported for bool tensors; convert with .to(kFloat32) first");
  return run(OpId::Relu, "relu", x, x.dtype());
}
Tensor Tensor::neg() const { return hwaro::neg(*this); }
Tensor Tensor::abs() const { return hwaro::abs(*this); }
Tensor Tensor::relu() const { return hwaro::relu(*this); }
Tensor& Tensor::neg_() {
  check_not_bool("neg_", *this);
  return run_(OpId::Neg, "neg_", *this, dtype());
}
Tensor& Tensor::abs_() { return run_(OpId::Abs, "abs_", *this, dtype()); }
Tensor& Tensor::relu_() {
  ops::check_defined("relu_", {{"self", *this}});
  HWARO_CHECK(dtype() != DType::Bool, "relu_: not supported for bool tensors");
  return run_(OpId::Relu, "relu_", *this, dtype());
}

// Float-only functions.
#define HWARO_FLOAT_UNARY(name, Op)                                                                \
  Tensor name(const Tensor& x) { return run(OpId::Op, #name, x, float_of(#name, x)); }                    \
  Tensor Tensor::name() const { return hwaro::name(*this); }                                       \
  Tensor& Tensor::name##_() { return run_(OpId::Op, #name "_", *this, float_of(#name "_", *this)); }
HWARO_FLOAT_UNARY(exp, Exp)
HWARO_FLOAT_UNARY(expm1, Expm1)
HWARO_FLOAT_UNARY(log, Log)
HWARO_FLOAT_UNARY(log1p, Log1p)
HWARO_FLOAT_UNARY(sqrt, Sqrt)
HWARO_FLOAT_UNARY(rsqrt, Rsqrt)
HWARO_FLOAT_UNARY(tanh, Tanh)
HWARO_FLOAT_UNARY(sigmoid, Sigmoid)
HWARO_FLOAT_UNARY(silu, Silu)
#undef HWARO_FLOAT_UNARY

Tensor gelu(const Tensor& x, bool tanh_approximation) {
  KernelArgs args = gelu_args(tanh_approximation);
  const DType dt = float_of("gelu", x);
  return ops::unary(OpId::Gelu, "gelu", x, dt, dt, args);
}
Tensor Tensor::gelu(bool tanh_approximation) const { return hwaro::gelu(*this, tanh_approximation); }
Tensor& Tensor::gelu_(bool tanh_approximation) {
  KernelArgs args = gelu_args(tanh_approximation);
  return ops::unary_(OpId::Gelu, "gelu_", *this, float_of("gelu_", *this), args);
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  KernelArgs args;
  const DType dt = clamp_setup("clamp", x, min, max, args);
  return ops::unary(OpId::Clamp, "clamp", x, dt, dt, args);
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return hwaro::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  KernelArgs args;
  const DType dt = clamp_setup("clamp_", *this, min, max, args);
  return ops::unary_(OpId::Clamp, "clamp_", *this, dt, args);
}

Tensor logical_not(const Tensor& x) {
  ops::check_defined("logical_not", {{"self", x}});
  KernelArgs args;
  return ops::unary(OpId::LogicalNot, "logical_not", x, x.dtype(), DType::Bool, args);
}
Tensor Tensor::logical_not() const { return hwaro::logical_not(*this); }

}  // namespace hwaro
