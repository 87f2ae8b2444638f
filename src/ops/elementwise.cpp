// The shared launch machinery of the elementwise ops (see elementwise.h).
#include "ops/elementwise.h"

#include <algorithm>

#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro::ops {

namespace {
// 0 bool, 1 integral, 2 floating: the kinds of PyTorch's promotion categories.
int kind_of(DType d) { return d == DType::Bool ? 0 : (is_floating_point(d) ? 2 : 1); }
}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  const bool a_dimensioned = a.dim() > 0, b_dimensioned = b.dim() > 0;
  if (a_dimensioned == b_dimensioned) return promote_types(a.dtype(), b.dtype());
  const DType higher = a_dimensioned ? a.dtype() : b.dtype();  // the dimensioned one
  const DType lower = a_dimensioned ? b.dtype() : a.dtype();   // the 0-dim one
  // A 0-dim tensor only counts when it is of a higher kind (ATen's combine_categories).
  return kind_of(lower) > kind_of(higher) ? promote_types(higher, lower) : higher;
}

DType float_result(DType dtype) { return is_floating_point(dtype) ? dtype : kDefaultFloatDType; }

Tensor wrap_scalar(const Scalar& value, DType dtype, Device device) {
  Tensor t = new_tensor({}, dtype, device);
  t.fill_(value);
  return t;
}

namespace {
// binary() without the autograd record: the kernel launch alone.
Tensor binary_kernel(OpId op, const char* name, const Tensor& a, const Tensor& b, DType compute, DType out_dtype,
                     KernelArgs& params) {
  const Device device = a.device();
  if (a.dtype() == compute && b.dtype() == compute && a.sizes() == b.sizes()) {
    Tensor out = new_tensor(a.sizes(), out_dtype, device);
    params.tensors[0] = view_of(out);
    params.tensors[1] = view_of(a);
    params.tensors[2] = view_of(b);
    params.num_tensors = 3;
    launch(op, compute, device, params);
    return out;
  }
  const DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  const Tensor ca = a.to(compute);
  const Tensor cb = b.to(compute);
  Tensor out = new_tensor(shape, out_dtype, device);
  DimVector a_strides, b_strides;
  params.tensors[0] = view_of(out);
  params.tensors[1] = broadcast_view(ca, shape, a_strides);
  params.tensors[2] = broadcast_view(cb, shape, b_strides);
  params.num_tensors = 3;
  launch(op, compute, device, params);
  return out;
}
}  // namespace

Tensor binary(OpId op, const char* name, const Tensor& a, const Tensor& b, DType compute, DType out_dtype,
              KernelArgs& params) {
  check_same_device(name, {{"self", a}, {"other", b}});
  GradScope grad({&a, &b});
  const Tensor out = binary_kernel(op, name, a, b, compute, out_dtype, params);
  if (grad.active() && is_floating_point(out_dtype)) {
    GradCall call{.kind = GradOp::Binary, .op = op, .inputs = {a, b}};
    for (int i = 0; i < 4; ++i) call.reals[i] = params.scalars[i];
    grad.record(out, std::move(call));
  }
  return out;
}

namespace {
// True when a and b are views of the same elements in the same layout (so an elementwise
// in-place op reads each element before writing it, and needs no copy of b).
bool same_layout(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides();
}
}  // namespace

Tensor& binary_(OpId op, const char* name, Tensor& self, const Tensor& other, DType compute, KernelArgs& params) {
  check_same_device(name, {{"self", self}, {"other", other}});
  check_inplace_grad(name, self, &other);
  check_no_internal_overlap(name, self);
  check_inplace_dtype(name, self, compute);
  const DimVector shape = broadcast_shapes(self.sizes(), other.sizes(), name);
  HWARO_CHECK(shape.ref() == self.sizes(), name, ": output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", shape.ref(), "; an in-place op cannot grow its target, ",
              "use the out-of-place form");
  if (compute != self.dtype()) {  // e.g. int32 += int64: computed in int64, stored back as int32
    self.copy_(binary(op, name, self, other, compute, compute, params));
    return self;
  }
  Tensor b = other.to(compute);
  // An overlapping view of self in another layout would be read after being written.
  if (b.is_alias_of(self) && !same_layout(b, self)) b = b.clone();
  DimVector b_strides;
  params.tensors[0] = view_of(self);
  params.tensors[1] = view_of(self);
  params.tensors[2] = broadcast_view(b, self.sizes(), b_strides);
  params.num_tensors = 3;
  launch(op, compute, self.device(), params);
  bump_version(self);
  return self;
}

Tensor unary(OpId op, const char* name, const Tensor& x, DType compute, DType out_dtype, KernelArgs& params) {
  check_defined(name, {{"self", x}});
  GradScope grad({&x});
  const Tensor cx = x.to(compute);
  Tensor out = new_tensor(x.sizes(), out_dtype, x.device());
  params.tensors[0] = view_of(out);
  params.tensors[1] = view_of(cx);
  params.num_tensors = 2;
  launch(op, compute, x.device(), params);
  if (grad.active() && is_floating_point(out_dtype)) {
    GradCall call{.kind = GradOp::Unary, .op = op, .inputs = {x}};
    for (int i = 0; i < 4; ++i) call.reals[i] = params.scalars[i];
    for (int i = 0; i < 4; ++i) call.ints.push_back(params.ints[i]);
    grad.record(out, std::move(call));
  }
  return out;
}

Tensor& unary_(OpId op, const char* name, Tensor& self, DType compute, KernelArgs& params) {
  check_defined(name, {{"self", self}});
  check_inplace_grad(name, self);
  check_no_internal_overlap(name, self);
  check_inplace_dtype(name, self, compute);
  if (compute != self.dtype()) {
    self.copy_(unary(op, name, self, compute, compute, params));
    return self;
  }
  params.tensors[0] = view_of(self);
  params.tensors[1] = view_of(self);
  params.num_tensors = 2;
  launch(op, compute, self.device(), params);
  bump_version(self);
  return self;
}

bool all_true(const Tensor& bool_tensor) {
  const Tensor host = bool_tensor.cpu().contiguous();
  const bool* p = static_cast<const bool*>(host.data_ptr());
  return std::all_of(p, p + host.numel(), [](bool v) { return v; });
}

}  // namespace hwaro::ops
