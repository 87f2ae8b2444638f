// Binary arithmetic: add, sub, mul, div, pow, maximum, minimum, where, masked_fill, as free
// functions and Tensor methods (in-place forms included). Scalars become 0-dim tensors of the
// result dtype, broadcast by the kernel.
#include "hwaro/ops.h"
#include "ops/elementwise.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

using ops::result_type;

// PyTorch's checks on add/sub's alpha.
void check_alpha(const char* name, DType result, const Scalar& alpha) {
  HWARO_CHECK(is_floating_point(result) || !alpha.is_floating_point(), name,
              ": for integral input tensors, argument alpha must not be a floating point number (got ", alpha,
              " with result dtype ", result, ")");
  HWARO_CHECK(result == DType::Bool || !alpha.is_bool(), name,
              ": a boolean alpha is only supported for boolean results (result dtype is ", result, ")");
}

void check_sub(DType a, DType b) {
  HWARO_CHECK(a != DType::Bool || b != DType::Bool,
              "sub: subtraction, the `-` operator, with two bool tensors is not supported; use the `^` or "
              "logical_xor() operator instead");
  HWARO_CHECK(a != DType::Bool && b != DType::Bool,
              "sub: subtraction, the `-` operator, with a bool tensor is not supported; if you are trying to "
              "invert a mask, use the `!` operator or logical_not() instead");
}

// The dtype a Scalar operand wraps to: bool for a bool Scalar, else as torch.tensor(value).
DType scalar_dtype(const Scalar& s) { return s.default_dtype(); }

KernelArgs alpha_args(const Scalar& alpha) {
  KernelArgs args;
  args.scalars[0] = alpha.to_double();
  return args;
}

// The binary op `name` between self and a Scalar, out of place or in place.
Tensor with_scalar(OpId op, const char* name, const Tensor& self, const Scalar& other, DType compute,
                   DType out_dtype, KernelArgs args) {
  ops::check_defined(name, {{"self", self}});
  return ops::binary(op, name, self, ops::wrap_scalar(other, compute, self.device()), compute, out_dtype, args);
}
Tensor& with_scalar_(OpId op, const char* name, Tensor& self, const Scalar& other, DType compute, KernelArgs args) {
  ops::check_defined(name, {{"self", self}});
  return ops::binary_(op, name, self, ops::wrap_scalar(other, compute, self.device()), compute, args);
}

void check_pow_exponent(DType result, const Scalar& exponent) {
  HWARO_CHECK(is_floating_point(result) || exponent.is_floating_point() || exponent.to_int64() >= 0,
              "pow: integers to negative integer powers are not allowed (exponent ", exponent,
              " with result dtype ", result, "); convert the base to a floating type first");
}

}  // namespace

// ---- add / sub ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ops::check_same_device("add", {{"self", a}, {"other", b}});
  const DType dt = result_type(a, b);
  check_alpha("add", dt, alpha);
  KernelArgs args = alpha_args(alpha);
  return ops::binary(OpId::Add, "add", a, b, dt, dt, args);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ops::check_same_device("sub", {{"self", a}, {"other", b}});
  check_sub(a.dtype(), b.dtype());
  const DType dt = result_type(a, b);
  check_alpha("sub", dt, alpha);
  KernelArgs args = alpha_args(alpha);
  return ops::binary(OpId::Sub, "sub", a, b, dt, dt, args);
}
Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return hwaro::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return hwaro::sub(*this, other, alpha); }
Tensor Tensor::add(const Scalar& other) const {
  ops::check_defined("add", {{"self", *this}});
  const DType dt = hwaro::result_type(dtype(), other);
  return with_scalar(OpId::Add, "add", *this, other, dt, dt, alpha_args(1));
}
Tensor Tensor::sub(const Scalar& other) const {
  ops::check_defined("sub", {{"self", *this}});
  check_sub(dtype(), scalar_dtype(other));
  const DType dt = hwaro::result_type(dtype(), other);
  return with_scalar(OpId::Sub, "sub", *this, other, dt, dt, alpha_args(1));
}
Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  ops::check_same_device("add_", {{"self", *this}, {"other", other}});
  const DType dt = ops::result_type(*this, other);
  check_alpha("add_", dt, alpha);
  KernelArgs args = alpha_args(alpha);
  return ops::binary_(OpId::Add, "add_", *this, other, dt, args);
}
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  ops::check_same_device("sub_", {{"self", *this}, {"other", other}});
  check_sub(dtype(), other.dtype());
  const DType dt = ops::result_type(*this, other);
  check_alpha("sub_", dt, alpha);
  KernelArgs args = alpha_args(alpha);
  return ops::binary_(OpId::Sub, "sub_", *this, other, dt, args);
}
Tensor& Tensor::add_(const Scalar& other) {
  ops::check_defined("add_", {{"self", *this}});
  return with_scalar_(OpId::Add, "add_", *this, other, hwaro::result_type(dtype(), other), alpha_args(1));
}
Tensor& Tensor::sub_(const Scalar& other) {
  ops::check_defined("sub_", {{"self", *this}});
  check_sub(dtype(), scalar_dtype(other));
  return with_scalar_(OpId::Sub, "sub_", *this, other, hwaro::result_type(dtype(), other), alpha_args(1));
}

// ---- mul / div ----
namespace {
// A binary op computed and returned in the promoted dtype of its inputs.
Tensor promoted_binary(OpId op, const char* name, const Tensor& a, const Tensor& b) {
  ops::check_same_device(name, {{"self", a}, {"other", b}});
  const DType dt = result_type(a, b);
  KernelArgs args;
  return ops::binary(op, name, a, b, dt, dt, args);
}
}  // namespace

Tensor mul(const Tensor& a, const Tensor& b) { return promoted_binary(OpId::Mul, "mul", a, b); }
// True division: integer and bool inputs give float32, so an integer zero divisor gives inf or
// nan (as torch.div), never a trap.
Tensor div(const Tensor& a, const Tensor& b) {
  ops::check_same_device("div", {{"self", a}, {"other", b}});
  const DType dt = ops::float_result(result_type(a, b));
  KernelArgs args;
  return ops::binary(OpId::Div, "div", a, b, dt, dt, args);
}
Tensor Tensor::mul(const Tensor& other) const { return hwaro::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return hwaro::div(*this, other); }
Tensor Tensor::mul(const Scalar& other) const {
  ops::check_defined("mul", {{"self", *this}});
  const DType dt = hwaro::result_type(dtype(), other);
  return with_scalar(OpId::Mul, "mul", *this, other, dt, dt, {});
}
Tensor Tensor::div(const Scalar& other) const {
  ops::check_defined("div", {{"self", *this}});
  const DType dt = ops::float_result(hwaro::result_type(dtype(), other));
  return with_scalar(OpId::Div, "div", *this, other, dt, dt, {});
}
Tensor& Tensor::mul_(const Tensor& other) {
  ops::check_same_device("mul_", {{"self", *this}, {"other", other}});
  KernelArgs args;
  return ops::binary_(OpId::Mul, "mul_", *this, other, ops::result_type(*this, other), args);
}
Tensor& Tensor::div_(const Tensor& other) {
  ops::check_same_device("div_", {{"self", *this}, {"other", other}});
  KernelArgs args;
  return ops::binary_(OpId::Div, "div_", *this, other, ops::float_result(ops::result_type(*this, other)), args);
}
Tensor& Tensor::mul_(const Scalar& other) {
  ops::check_defined("mul_", {{"self", *this}});
  return with_scalar_(OpId::Mul, "mul_", *this, other, hwaro::result_type(dtype(), other), {});
}
Tensor& Tensor::div_(const Scalar& other) {
  ops::check_defined("div_", {{"self", *this}});
  return with_scalar_(OpId::Div, "div_", *this, other, ops::float_result(hwaro::result_type(dtype(), other)), {});
}

namespace ops {
Tensor rsub(const Tensor& self, const Scalar& other) {
  check_defined("sub", {{"self", self}});
  check_sub(scalar_dtype(other), self.dtype());
  const DType dt = hwaro::result_type(self.dtype(), other);
  KernelArgs args = alpha_args(1);
  return binary(OpId::Sub, "sub", wrap_scalar(other, dt, self.device()), self, dt, dt, args);
}
Tensor rdiv(const Tensor& self, const Scalar& other) {
  check_defined("div", {{"self", self}});
  const DType dt = float_result(hwaro::result_type(self.dtype(), other));
  KernelArgs args;
  return binary(OpId::Div, "div", wrap_scalar(other, dt, self.device()), self, dt, dt, args);
}
}  // namespace ops

// ---- pow ----
Tensor pow(const Tensor& a, const Tensor& exponent) {
  ops::check_same_device("pow", {{"self", a}, {"exponent", exponent}});
  const DType dt = result_type(a, exponent);
  KernelArgs args;
  return ops::binary(OpId::Pow, "pow", a, exponent, dt, dt, args);
}
Tensor pow(const Tensor& a, const Scalar& exponent) {
  ops::check_defined("pow", {{"self", a}});
  const DType dt = hwaro::result_type(a.dtype(), exponent);
  check_pow_exponent(dt, exponent);
  KernelArgs args;
  args.scalars[0] = exponent.to_double();
  return ops::unary(OpId::PowScalar, "pow", a, dt, dt, args);
}
Tensor pow(const Scalar& base, const Tensor& exponent) {
  ops::check_defined("pow", {{"exponent", exponent}});
  const DType dt = hwaro::result_type(exponent.dtype(), base);
  KernelArgs args;
  return ops::binary(OpId::Pow, "pow", ops::wrap_scalar(base, dt, exponent.device()), exponent, dt, dt, args);
}
Tensor Tensor::pow(const Tensor& exponent) const { return hwaro::pow(*this, exponent); }
Tensor Tensor::pow(const Scalar& exponent) const { return hwaro::pow(*this, exponent); }
Tensor& Tensor::pow_(const Tensor& exponent) {
  ops::check_same_device("pow_", {{"self", *this}, {"exponent", exponent}});
  KernelArgs args;
  return ops::binary_(OpId::Pow, "pow_", *this, exponent, ops::result_type(*this, exponent), args);
}
Tensor& Tensor::pow_(const Scalar& exponent) {
  ops::check_defined("pow_", {{"self", *this}});
  const DType dt = hwaro::result_type(dtype(), exponent);
  check_pow_exponent(dt, exponent);
  KernelArgs args;
  args.scalars[0] = exponent.to_double();
  return ops::unary_(OpId::PowScalar, "pow_", *this, dt, args);
}

// ---- maximum / minimum ----
Tensor maximum(const Tensor& a, const Tensor& b) { return promoted_binary(OpId::Maximum, "maximum", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return promoted_binary(OpId::Minimum, "minimum", a, b); }
Tensor Tensor::maximum(const Tensor& other) const { return hwaro::maximum(*this, other); }
Tensor Tensor::minimum(const Tensor& other) const { return hwaro::minimum(*this, other); }

// ---- where / masked_fill ----
namespace {
Tensor where_impl(const Tensor& condition, const Tensor& a, const Tensor& b, DType dt) {
  HWARO_CHECK(condition.dtype() == DType::Bool, "where: expected condition to be a boolean tensor, but got a ",
              "tensor with dtype ", condition.dtype(), "; compare it first (e.g. x > 0) or convert with .to(kBool)");
  ops::GradScope grad({&a, &b});
  const DimVector shape =
      ops::broadcast_shapes(ops::broadcast_shapes(condition.sizes(), a.sizes(), "where").ref(), b.sizes(), "where");
  const Tensor ca = a.to(dt), cb = b.to(dt);
  Tensor out = ops::new_tensor(shape, dt, a.device());
  DimVector c_strides, a_strides, b_strides;
  KernelArgs args;
  args.tensors[0] = ops::view_of(out);
  args.tensors[1] = ops::broadcast_view(condition, shape, c_strides);
  args.tensors[2] = ops::broadcast_view(ca, shape, a_strides);
  args.tensors[3] = ops::broadcast_view(cb, shape, b_strides);
  args.num_tensors = 4;
  ops::launch(OpId::Where, dt, out.device(), args);
  if (grad.active() && is_floating_point(dt)) {
    grad.record(out, {.kind = ops::GradOp::Where, .inputs = {a, b}, .saved = {condition}});
  }
  return out;
}
}  // namespace

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  ops::check_same_device("where", {{"condition", condition}, {"self", a}, {"other", b}});
  return where_impl(condition, a, b, result_type(a, b));
}
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b) {
  ops::check_same_device("where", {{"condition", condition}, {"other", b}});
  const DType dt = hwaro::result_type(b.dtype(), a);
  return where_impl(condition, ops::wrap_scalar(a, dt, b.device()), b, dt);
}
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  ops::check_same_device("where", {{"condition", condition}, {"self", a}});
  const DType dt = hwaro::result_type(a.dtype(), b);
  return where_impl(condition, a, ops::wrap_scalar(b, dt, a.device()), dt);
}

namespace {
void check_masked_fill(const char* name, const Tensor& self, const Tensor& mask) {
  ops::check_same_device(name, {{"self", self}, {"mask", mask}});
  HWARO_CHECK(mask.dtype() == DType::Bool, name, ": only boolean masks are supported, but got a mask with dtype ",
              mask.dtype(), "; compare it first (e.g. x > 0) or convert with .to(kBool)");
  HWARO_CHECK(ops::broadcast_shapes(self.sizes(), mask.sizes(), name).ref() == self.sizes(), name, ": mask of shape ",
              mask.sizes(), " cannot be broadcast to the shape ", self.sizes(), " of the tensor it fills");
}

// out = mask ? value : src, the mask broadcast to src's shape; out may be src itself.
void fill_where_masked(const Tensor& out, const Tensor& mask, const Scalar& value, const Tensor& src) {
  // The value is cast to src's dtype, as PyTorch does.
  const Tensor fill = ops::wrap_scalar(value, src.dtype(), src.device());
  DimVector m_strides, v_strides;
  KernelArgs args;
  args.tensors[0] = ops::view_of(out);
  args.tensors[1] = ops::broadcast_view(mask, src.sizes(), m_strides);
  args.tensors[2] = ops::broadcast_view(fill, src.sizes(), v_strides);
  args.tensors[3] = ops::view_of(src);
  args.num_tensors = 4;
  ops::launch(OpId::Where, src.dtype(), src.device(), args);
}
}  // namespace

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  check_masked_fill("masked_fill_", *this, mask);
  ops::check_inplace_grad("masked_fill_", *this);
  fill_where_masked(*this, mask, value, *this);
  ops::bump_version(*this);
  return *this;
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  check_masked_fill("masked_fill", *this, mask);
  ops::GradScope grad({this});
  // Written in one pass into a new tensor, not a clone filled in place (ReLU's backward runs this).
  Tensor out = ops::new_tensor(sizes(), dtype(), device());
  fill_where_masked(out, mask, value, *this);
  if (grad.active()) grad.record(out, {.kind = ops::GradOp::MaskedFill, .inputs = {*this}, .saved = {mask}});
  return out;
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) { return x.masked_fill(mask, value); }

}  // namespace hwaro
