// Tensor's accessors: shape, dtype, device, raw data and item().
#include "core/dtype_dispatch.h"
#include "core/tensor_impl.h"
#include "hwaro/tensor.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {
TensorImpl& checked(const Tensor& t) {
  HWARO_CHECK(t.defined(), "this tensor is undefined (default-constructed); assign it a value first");
  return *t.impl();
}
}  // namespace

Device Tensor::device() const { return checked(*this).device(); }
DType Tensor::dtype() const { return checked(*this).dtype(); }
IntArrayRef Tensor::sizes() const { return checked(*this).sizes(); }
IntArrayRef Tensor::strides() const { return checked(*this).strides(); }
std::int64_t Tensor::size(std::int64_t d) const { return sizes()[ops::wrap_dim(d, dim())]; }
std::int64_t Tensor::stride(std::int64_t d) const { return strides()[ops::wrap_dim(d, dim())]; }
std::int64_t Tensor::dim() const { return checked(*this).dim(); }
std::int64_t Tensor::numel() const { return checked(*this).numel(); }
std::int64_t Tensor::storage_offset() const { return checked(*this).storage_offset(); }
std::size_t Tensor::element_size() const { return hwaro::element_size(dtype()); }
std::size_t Tensor::nbytes() const { return static_cast<std::size_t>(numel()) * element_size(); }
bool Tensor::is_contiguous() const { return checked(*this).is_contiguous(); }
bool Tensor::is_pinned() const { return checked(*this).storage()->is_pinned(); }
bool Tensor::is_alias_of(const Tensor& other) const {
  return defined() && other.defined() && impl_->storage() == other.impl_->storage();
}
std::uint32_t Tensor::version() const { return checked(*this).storage()->version(); }
TensorOptions Tensor::options() const {
  return {.dtype = dtype(), .device = device(), .requires_grad = requires_grad(), .pin_memory = is_pinned()};
}

bool Tensor::requires_grad() const { return checked(*this).requires_grad(); }

void* Tensor::data_ptr() const { return checked(*this).data(); }

Scalar Tensor::item() const {
  HWARO_CHECK(numel() == 1, "item(): a Tensor with ", numel(), " elements cannot be converted to a Scalar",
              " (only one-element tensors can); shape is ", sizes());
  const Tensor host = to(Device(DeviceType::CPU));
  return visit_dtype(dtype(), [&]<typename T>() -> Scalar { return Scalar(*static_cast<const T*>(host.data_ptr())); });
}

namespace detail {
void check_data_ptr_dtype(const Tensor& t, DType requested) {
  HWARO_CHECK(t.dtype() == requested, "data_ptr<", requested, ">() called on a tensor of dtype ", t.dtype(),
              "; use to(", requested, ") first or ask for the matching type");
}
}  // namespace detail

}  // namespace hwaro
