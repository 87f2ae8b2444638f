#include "ops/op_helpers.h"
#include "ops/tensor_creation_log.h"

#include <algorithm>
#include <limits>

#include "hwaro/errors.h"

namespace hwaro::ops {

void check_defined(const char* op, std::initializer_list<NamedArg> args) {
  for (const NamedArg& a : args) {
    HWARO_CHECK(a.tensor.defined(), op, ": argument '", a.name, "' is an undefined tensor (default-constructed)");
  }
}

void check_same_device(const char* op, std::initializer_list<NamedArg> args) {
  check_defined(op, args);
  check_same_device_where_defined(op, args);
}

void check_same_device_where_defined(const char* op, std::initializer_list<NamedArg> args) {
  const Tensor* first = nullptr;
  for (const NamedArg& a : args) {
    if (!a.tensor.defined()) continue;
    if (first == nullptr) {
      first = &a.tensor;
      continue;
    }
    if (HWARO_UNLIKELY(a.tensor.device() != first->device())) {
      throw DeviceMismatchError(detail::str_cat(
          "Expected all tensors to be on the same device, but found at least two devices, ", first->device(), " and ",
          a.tensor.device(), "! (when checking argument '", a.name, "' of ", op, ")"));
    }
  }
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim) {
  const std::int64_t lo = ndim == 0 ? -1 : -ndim;
  const std::int64_t hi = ndim == 0 ? 0 : ndim - 1;
  HWARO_CHECK_AS(IndexError, dim >= lo && dim <= hi, "Dimension out of range (expected to be in range of [", lo,
                 ", ", hi, "], but got ", dim, ")");
  return dim < 0 ? dim + std::max<std::int64_t>(ndim, 1) : dim;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    HWARO_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", a, " and ", b,
                " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db,
                "); sizes must match or one of them be 1");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor new_tensor(IntArrayRef sizes, DType dtype, Device device, bool pinned) {
  // The element count, the strides and the byte size are all products of the sizes (zeros counted
  // as one for the strides); each must fit in int64, or every later use of them is undefined.
  std::int64_t span = static_cast<std::int64_t>(element_size(dtype));
  for (std::int64_t s : sizes) {
    HWARO_CHECK(s >= 0, "negative dimension in size ", sizes);
    const std::int64_t factor = std::max<std::int64_t>(s, 1);
    HWARO_CHECK(span <= std::numeric_limits<std::int64_t>::max() / factor, "size ", sizes, " of ", dtype,
                " is too large: its element count or byte size overflows a 64-bit integer");
    span *= factor;
  }
  const auto nbytes = static_cast<std::size_t>(product(sizes)) * element_size(dtype);
  Tensor t(std::make_shared<TensorImpl>(Storage::allocate(device, nbytes, pinned), dtype, sizes));
  TensorCreationLog::note(t);
  return t;
}

TensorView view_of(const Tensor& t) {
  TensorImpl* impl = t.impl();
  TensorView v;
  v.data = impl->data();
  v.dtype = impl->dtype();
  v.device = impl->device();
  v.ndim = static_cast<int>(impl->dim());
  v.sizes = impl->sizes().data();
  v.strides = impl->strides().data();
  return v;
}

TensorView broadcast_view(const Tensor& t, IntArrayRef out_sizes, DimVector& strides) {
  TensorView v = view_of(t);
  const IntArrayRef in_sizes = t.sizes();
  const IntArrayRef in_strides = t.strides();
  const std::size_t lead = out_sizes.size() - in_sizes.size();
  strides.assign(out_sizes.size(), 0);
  for (std::size_t i = 0; i < in_sizes.size(); ++i) {
    strides[lead + i] = in_sizes[i] == out_sizes[lead + i] ? in_strides[i] : 0;
  }
  v.ndim = static_cast<int>(out_sizes.size());
  v.sizes = out_sizes.data();
  v.strides = strides.data();
  return v;
}

void launch(OpId op, DType dtype, Device device, KernelArgs& args) {
  int index = 0;
  Backend& backend = detail::backend_for(device, &index);
  const KernelFn fn = backend.kernel(op, dtype);
  HWARO_CHECK(fn != nullptr, "the ", op_name(op), " kernel is not implemented for dtype ", dtype, " on ",
              device_type_name(device.type()));
  args.stream = &backend.current_stream(index);
  fn(args);
}

bool has_kernel(OpId op, DType dtype, Device device) {
  int index = 0;
  return detail::backend_for(device, &index).kernel(op, dtype) != nullptr;
}

void check_inplace_dtype(const char* op, const Tensor& self, DType result_dtype) {
  // torch.can_cast: no floating -> integral, no non-bool -> bool; narrowing within a kind is fine.
  const DType self_dtype = self.dtype();
  const bool to_lower_kind = (is_floating_point(result_dtype) && !is_floating_point(self_dtype)) ||
                             (result_dtype != DType::Bool && self_dtype == DType::Bool);
  const bool ok = !to_lower_kind;
  HWARO_CHECK(ok, op, ": result type ", result_dtype, " can't be cast to the desired output type ", self_dtype,
              " of the in-place target");
}

std::int64_t internal_overlap_dim(const Tensor& t) {
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) == 0) return d;
  }
  return -1;
}

void check_no_internal_overlap(const char* op, const Tensor& self) {
  const std::int64_t d = internal_overlap_dim(self);
  HWARO_CHECK(d < 0, op, ": more than one element of the written-to tensor refers to a single memory location (dim ",
              d, " of ", self.sizes(), " has stride 0, as expand() gives); clone() the tensor before writing into it");
}

void bump_version(const Tensor& t) { t.impl()->storage()->bump_version(); }

}  // namespace hwaro::ops
