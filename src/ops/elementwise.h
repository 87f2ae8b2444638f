#pragma once
// The machinery the elementwise entry points share: result dtypes, scalars as 0-dim tensors,
// and the out-of-place / in-place launch of a unary or binary kernel. Internal to src/ops.
#include "core/kernel_args.h"
#include "core/op_id.h"
#include "hwaro/tensor.h"

namespace hwaro::ops {

// PyTorch's result type of a binary op: dimensioned tensors outrank 0-dim tensors of the same
// kind, so float32[3] + float64[] is float32 but int32[3] + float64[] is float64.
DType result_type(const Tensor& a, const Tensor& b);
// The dtype of a float-only function's result (exp, div, ...): integers and bool give float32.
DType float_result(DType dtype);
// `value` as a 0-dim tensor of `dtype` on `device`, to broadcast against a tensor.
Tensor wrap_scalar(const Scalar& value, DType dtype, Device device);

// out = op(a, b) with a, b converted to `compute` and broadcast; out has `out_dtype`.
// Checks devices (arguments "self" and "other" of `name`) and shapes first. Equal shapes and
// dtypes take a fast path with no allocation but the result's.
Tensor binary(OpId op, const char* name, const Tensor& a, const Tensor& b, DType compute, DType out_dtype,
              KernelArgs& params);
// self = op(self, other), computed in `compute` (self's dtype must be able to hold it), other
// broadcast to self's shape.
Tensor& binary_(OpId op, const char* name, Tensor& self, const Tensor& other, DType compute, KernelArgs& params);

// out = op(x) computed in `compute` (x converted first); out has `out_dtype`.
Tensor unary(OpId op, const char* name, const Tensor& x, DType compute, DType out_dtype, KernelArgs& params);
// self = op(self); `compute` is the op's result dtype for self, which self must be able to hold.
Tensor& unary_(OpId op, const char* name, Tensor& self, DType compute, KernelArgs& params);

// True when every element of a bool tensor is true (read on the host; no reduction kernel).
bool all_true(const Tensor& bool_tensor);

// other - self and other / self, the right-hand forms of the scalar operators.
Tensor rsub(const Tensor& self, const Scalar& other);
Tensor rdiv(const Tensor& self, const Scalar& other);

}  // namespace hwaro::ops
