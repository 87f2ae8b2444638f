// Comparisons (eq, ne, lt, le, gt, ge), logical and/or/xor, and isclose / allclose / equal.
// Both sides are converted to their result dtype before comparing; the result is bool.
#include <limits>

#include "hwaro/ops.h"
#include "ops/elementwise.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

Tensor compare(OpId op, const char* name, const Tensor& a, const Tensor& b) {
  ops::check_same_device(name, {{"self", a}, {"other", b}});
  KernelArgs args;
  return ops::binary(op, name, a, b, ops::result_type(a, b), DType::Bool, args);
}

Tensor compare(OpId op, const char* name, const Tensor& a, const Scalar& b) {
  ops::check_defined(name, {{"self", a}});
  const DType dt = hwaro::result_type(a.dtype(), b);
  KernelArgs args;
  return ops::binary(op, name, a, ops::wrap_scalar(b, dt, a.device()), dt, DType::Bool, args);
}

}  // namespace

#define HWARO_COMPARISON(name, Op)                                                                     \
  Tensor name(const Tensor& a, const Tensor& b) { return compare(OpId::Op, #name, a, b); }             \
  Tensor Tensor::name(const Tensor& other) const { return compare(OpId::Op, #name, *this, other); }    \
  Tensor Tensor::name(const Scalar& other) const { return compare(OpId::Op, #name, *this, other); }
HWARO_COMPARISON(eq, Eq)
HWARO_COMPARISON(ne, Ne)
HWARO_COMPARISON(lt, Lt)
HWARO_COMPARISON(le, Le)
HWARO_COMPARISON(gt, Gt)
HWARO_COMPARISON(ge, Ge)
#undef HWARO_COMPARISON

#define HWARO_LOGICAL(name, Op)                                                                        \
  Tensor name(const Tensor& a, const Tensor& b) { return compare(OpId::Op, #name, a, b); }             \
  Tensor Tensor::name(const Tensor& other) const { return compare(OpId::Op, #name, *this, other); }
HWARO_LOGICAL(logical_and, LogicalAnd)
HWARO_LOGICAL(logical_or, LogicalOr)
HWARO_LOGICAL(logical_xor, LogicalXor)
#undef HWARO_LOGICAL

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  ops::check_same_device("isclose", {{"self", a}, {"other", b}});
  HWARO_CHECK(a.dtype() == b.dtype(), "isclose: expected both inputs to have the same dtype, but got ", a.dtype(),
              " and ", b.dtype(), "; convert one with .to(dtype)");
  HWARO_CHECK(rtol >= 0.0, "isclose: rtol must be greater than or equal to zero, but got ", rtol);
  HWARO_CHECK(atol >= 0.0, "isclose: atol must be greater than or equal to zero, but got ", atol);
  Tensor close = eq(a, b);  // exact equality, which also covers equal infinities
  if (a.dtype() == DType::Bool) return close;
  // |a - b| <= atol + rtol * |b| in float64, counted only when |a - b| is finite (so inf vs a
  // finite number, and NaN vs anything, are never close).
  const Tensor a64 = a.to(kFloat64), b64 = b.to(kFloat64);
  const Tensor error = (a64 - b64).abs();
  const Tensor allowed = b64.abs() * rtol + atol;
  return logical_or(close, logical_and(error <= allowed, error < std::numeric_limits<double>::infinity()));
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  return ops::all_true(isclose(a, b, rtol, atol));
}

bool equal(const Tensor& a, const Tensor& b) {
  ops::check_same_device("equal", {{"self", a}, {"other", b}});
  if (a.sizes() != b.sizes()) return false;
  return ops::all_true(eq(a, b));
}

}  // namespace hwaro
