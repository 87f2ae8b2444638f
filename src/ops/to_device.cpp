// Moving and copying: to(device), to(dtype), cpu(), cuda(), pin_memory(), contiguous(), clone(), copy_().
#include <cstdint>
#include <utility>

#include "core/tensor_impl.h"
#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

// Copies src (already broadcast-compatible with dst) into dst across devices: the non-CPU side's
// backend does the transfer. The dtypes are made equal first, on the source's side.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  const Tensor same_dtype = src.to(dst.dtype()).expand(dst.sizes()).contiguous();
  const bool dst_contiguous = dst.is_contiguous();
  const Tensor target = dst_contiguous ? dst : empty(dst.sizes(), {.dtype = dst.dtype(), .device = dst.device()});
  const Device remote = dst.device().is_cpu() ? src.device() : dst.device();
  int index = 0;
  Backend& backend = detail::backend_for(remote, &index);
  Stream& stream = backend.current_stream(index);
  backend.copy(ops::view_of(same_dtype), ops::view_of(target), stream);
  // Only a pinned host side may be left to complete asynchronously, as with CUDA's own rules.
  const bool host_pinned = (src.is_cpu() && src.is_pinned()) || (dst.is_cpu() && dst.is_pinned());
  const bool device_to_device = !src.is_cpu() && !dst.is_cpu();
  if (!(non_blocking && (host_pinned || device_to_device))) stream.synchronize();
  if (!dst_contiguous) const_cast<Tensor&>(dst).copy_(target);
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  ops::check_defined("copy_", {{"self", *this}, {"src", src}});
  ops::check_inplace_grad("copy_", *this, &src);
  ops::check_no_internal_overlap("copy_", *this);
  HWARO_CHECK(ops::broadcast_shapes(sizes(), src.sizes(), "copy_").ref() == sizes(),
              "copy_: source of shape ", src.sizes(), " cannot be broadcast to the destination's shape ", sizes());
  if (src.device() == device()) {
    KernelArgs args;
    DimVector src_strides;
    args.tensors[0] = ops::view_of(*this);
    args.tensors[1] = ops::broadcast_view(src, sizes(), src_strides);
    args.num_tensors = 2;
    ops::launch(OpId::Copy, dtype(), device(), args);
  } else {
    copy_across_devices(*this, src, non_blocking);
  }
  ops::bump_version(*this);
  return *this;
}

Tensor Tensor::to(Device target, DType dtype, bool non_blocking, bool copy) const {
  HWARO_CHECK(defined(), "to(): this tensor is undefined (default-constructed)");
  const Device resolved = detail::resolve(target);
  if (resolved == device() && dtype == this->dtype() && !copy) return *this;
  ops::GradScope grad({this});
  Tensor out = ops::new_tensor(sizes(), dtype, resolved);
  out.copy_(*this, non_blocking);
  if (grad.active() && hwaro::is_floating_point(dtype)) grad.record(out, {.kind = ops::GradOp::Convert, .inputs = {*this}});
  return out;
}

Tensor Tensor::to(Device target, bool non_blocking, bool copy) const { return to(target, dtype(), non_blocking, copy); }
Tensor Tensor::to(DType dtype, bool copy) const { return to(device(), dtype, false, copy); }
Tensor Tensor::to(const TensorOptions& options, bool non_blocking) const {
  Tensor out = to(options.device, options.dtype_or(dtype()), non_blocking);
  return options.pin_memory ? out.pin_memory() : out;
}
Tensor Tensor::cpu() const { return to(Device(DeviceType::CPU)); }
Tensor Tensor::cuda(int index) const { return to(Device(DeviceType::CUDA, index)); }

Tensor Tensor::pin_memory() const {
  HWARO_CHECK(is_cpu(), "pin_memory(): only CPU tensors can be pinned, this one is on ", device());
  if (is_pinned()) return *this;
  ops::GradScope grad({this});
  Tensor out = ops::new_tensor(sizes(), dtype(), device(), /*pinned=*/true);
  out.copy_(*this);
  if (grad.active()) grad.record(out, {.kind = ops::GradOp::Convert, .inputs = {*this}});
  return out;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  ops::GradScope grad({this});
  Tensor out = ops::new_tensor(sizes(), dtype(), device());
  out.copy_(*this);
  if (grad.active()) grad.record(out, {.kind = ops::GradOp::Convert, .inputs = {*this}});
  return out;
}

Tensor Tensor::detach() const {
  Tensor out(std::make_shared<TensorImpl>(impl_->storage(), dtype(), sizes(), strides(), storage_offset()));
  return out;
}

namespace {
// The value an integral tensor is filled with, refused where it does not fit the dtype, as PyTorch's
// checked_convert ("value cannot be converted to type uint8_t without overflow"): a NaN, an
// infinity or a float out of range (casting those is undefined in C++), or an integer out of the
// dtype's range (uint8 takes -255 to 255, negative ones wrapping as in two's complement).
std::int64_t integral_fill_value(const Scalar& value, DType dtype) {
  constexpr double k2Pow63 = 9223372036854775808.0;
  const double d = value.to_double();
  HWARO_CHECK(!value.is_floating_point() || (d >= -k2Pow63 && d < k2Pow63), "value ", d,
              " cannot be converted to type ", dtype, " without overflow");
  const std::int64_t i = value.to_int64();
  const auto [lo, hi] = dtype == kUInt8   ? std::pair<std::int64_t, std::int64_t>{-255, 255}
                        : dtype == kInt32 ? std::pair<std::int64_t, std::int64_t>{INT32_MIN, INT32_MAX}
                                          : std::pair<std::int64_t, std::int64_t>{INT64_MIN, INT64_MAX};
  HWARO_CHECK(i >= lo && i <= hi, "value ", i, " cannot be converted to type ", dtype, " without overflow");
  return i;
}
}  // namespace

Tensor& Tensor::fill_(const Scalar& value) {
  HWARO_CHECK(defined(), "fill_(): this tensor is undefined (default-constructed)");
  ops::check_inplace_grad("fill_", *this);
  KernelArgs args;
  args.tensors[0] = ops::view_of(*this);
  args.num_tensors = 1;
  args.scalars[0] = value.to_double();
  // Integral dtypes take the exact int64 (past 2^53 a double is not exact); the others the double.
  args.ints[0] = is_integral(dtype()) ? integral_fill_value(value, dtype()) : 0;
  ops::launch(OpId::Fill, dtype(), device(), args);
  ops::bump_version(*this);
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace hwaro
