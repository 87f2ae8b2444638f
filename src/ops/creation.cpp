// Creation ops: empty, zeros, ones, full, arange, linspace, eye, tensor, from_blob and the _like forms.
#include <cmath>

#include "core/dtype_dispatch.h"
#include "hwaro/ops.h"
#include "kernels/cast.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace ops {
Device creation_device(const TensorOptions& options) { return detail::resolve(options.device); }
}  // namespace ops

namespace {

Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad) t.set_requires_grad(true);
  return t;
}

Tensor make(IntArrayRef sizes, DType dtype, const TensorOptions& options) {
  const Device device = ops::creation_device(options);
  HWARO_CHECK(!options.pin_memory || device.is_cpu(), "pin_memory applies to CPU tensors only, but device is ",
              device);
  return ops::new_tensor(sizes, dtype, device, options.pin_memory);
}

}  // namespace

Tensor empty(IntArrayRef sizes, const TensorOptions& options) {
  return finish(make(sizes, options.dtype_or(kDefaultFloatDType), options), options);
}

Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options) {
  Tensor t = make(sizes, options.dtype_or(value.default_dtype()), options);
  t.fill_(value);
  return finish(t, options);
}

Tensor zeros(IntArrayRef sizes, const TensorOptions& options) {
  return full(sizes, 0, {.dtype = options.dtype_or(kDefaultFloatDType), .device = options.device,
                         .requires_grad = options.requires_grad, .pin_memory = options.pin_memory});
}

Tensor ones(IntArrayRef sizes, const TensorOptions& options) {
  return full(sizes, 1, {.dtype = options.dtype_or(kDefaultFloatDType), .device = options.device,
                         .requires_grad = options.requires_grad, .pin_memory = options.pin_memory});
}

Tensor scalar_tensor(const Scalar& value, const TensorOptions& options) { return full({}, value, options); }

Tensor arange(const Scalar& end, const TensorOptions& options) { return arange(0, end, 1, options); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options) {
  const bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  const DType dtype = options.dtype_or(floating ? kDefaultFloatDType : kInt64);
  HWARO_CHECK(step.to_double() != 0.0, "arange: step must be nonzero");
  const double span = (end.to_double() - start.to_double()) / step.to_double();
  HWARO_CHECK(std::isfinite(span), "arange: start, end and step must be finite, got ", start, ", ", end, ", ", step);
  const auto n = static_cast<std::int64_t>(std::max(0.0, std::ceil(span)));
  Tensor t = make({n}, dtype, options);
  KernelArgs args;
  args.tensors[0] = ops::view_of(t);
  args.num_tensors = 1;
  args.scalars[0] = start.to_double();
  args.scalars[1] = step.to_double();
  args.ints[0] = start.to_int64();
  args.ints[1] = step.to_int64();
  HWARO_CHECK(is_floating_point(dtype) || (!start.is_floating_point() && !step.is_floating_point()),
              "arange: an integer dtype needs integer start and step, got ", start, " and ", step);
  ops::launch(OpId::Arange, dtype, t.device(), args);
  return finish(t, options);
}

Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options) {
  HWARO_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  // Computed in float64 on the host, symmetric about the middle as torch.linspace, then moved.
  std::vector<double> values(static_cast<std::size_t>(steps));
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  const std::int64_t half = steps / 2;
  for (std::int64_t i = 0; i < steps; ++i) {
    values[static_cast<std::size_t>(i)] =
        i < half || steps == 1 ? start + step * static_cast<double>(i) : end - step * static_cast<double>(steps - 1 - i);
  }
  Tensor t = tensor(values).to(options.dtype_or(kDefaultFloatDType)).to(ops::creation_device(options));
  return finish(t, options);
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, const TensorOptions& options) {
  const std::int64_t cols = m.value_or(n);
  HWARO_CHECK(n >= 0 && cols >= 0, "eye: sizes must be non-negative, got ", n, " x ", cols);
  Tensor t = zeros({n, cols}, {.dtype = options.dtype_or(kDefaultFloatDType), .device = options.device});
  const std::int64_t diag = std::min(n, cols);
  ops::make_view(t, {diag}, {cols + 1}, 0).fill_(1);
  return finish(t, options);
}

Tensor empty_like(const Tensor& t, const TensorOptions& options) { return empty(t.sizes(), options); }
Tensor empty_like(const Tensor& t) { return empty(t.sizes(), {.dtype = t.dtype(), .device = t.device()}); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), {.dtype = t.dtype(), .device = t.device()}); }
Tensor zeros_like(const Tensor& t, const TensorOptions& options) { return zeros(t.sizes(), options); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), {.dtype = t.dtype(), .device = t.device()}); }
Tensor ones_like(const Tensor& t, const TensorOptions& options) { return ones(t.sizes(), options); }
Tensor full_like(const Tensor& t, const Scalar& value) {
  return full(t.sizes(), value, {.dtype = t.dtype(), .device = t.device()});
}
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options) {
  return full(t.sizes(), value, options);
}
Tensor rand_like(const Tensor& t) { return rand(t.sizes(), {.dtype = t.dtype(), .device = t.device()}); }
Tensor randn_like(const Tensor& t) { return randn(t.sizes(), {.dtype = t.dtype(), .device = t.device()}); }

template <typename T> Tensor tensor(const std::vector<T>& values, const TensorOptions& options) {
  return tensor(values, {static_cast<std::int64_t>(values.size())}, options);
}

template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef sizes, const TensorOptions& options) {
  HWARO_CHECK(product(sizes) == static_cast<std::int64_t>(values.size()), "tensor: ", values.size(),
              " values cannot fill a tensor of shape ", sizes);
  Tensor host = ops::new_tensor(sizes, dtype_of<T>(), Device(DeviceType::CPU));
  T* p = static_cast<T*>(host.data_ptr());
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  const DType dtype = options.dtype_or(dtype_of<T>());
  return finish(host.to(dtype).to(ops::creation_device(options)), options);
}

template <typename T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, const TensorOptions& options) {
  std::vector<T> values;
  const std::size_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
  for (const auto& row : rows) {
    HWARO_CHECK(row.size() == cols, "tensor: rows of a nested list must have equal lengths, got ", cols, " and ",
                row.size());
    values.insert(values.end(), row.begin(), row.end());
  }
  return tensor(values, {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(cols)}, options);
}

#define HWARO_INSTANTIATE_TENSOR(T)                                                                 \
  template Tensor tensor<T>(const std::vector<T>&, const TensorOptions&);                         \
  template Tensor tensor<T>(const std::vector<T>&, IntArrayRef, const TensorOptions&);            \
  template Tensor tensor<T>(std::initializer_list<std::initializer_list<T>>, const TensorOptions&);
HWARO_INSTANTIATE_TENSOR(bool)
HWARO_INSTANTIATE_TENSOR(std::uint8_t)
HWARO_INSTANTIATE_TENSOR(std::int32_t)
HWARO_INSTANTIATE_TENSOR(std::int64_t)
HWARO_INSTANTIATE_TENSOR(Half)
HWARO_INSTANTIATE_TENSOR(BFloat16)
HWARO_INSTANTIATE_TENSOR(float)
HWARO_INSTANTIATE_TENSOR(double)
#undef HWARO_INSTANTIATE_TENSOR

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  HWARO_CHECK(sizes.size() == strides.size(), "from_blob: ", sizes.size(), " sizes but ", strides.size(),
              " strides");
  const DType dtype = options.dtype_or(kDefaultFloatDType);
  const Device device = ops::creation_device(options);
  std::int64_t extent = 1;  // elements from data to the last one, plus one
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    HWARO_CHECK(sizes[i] >= 0 && strides[i] >= 0, "from_blob: sizes and strides must be non-negative");
    if (sizes[i] == 0) extent = 0;
    if (extent != 0) extent += (sizes[i] - 1) * strides[i];
  }
  HWARO_CHECK(data != nullptr || extent == 0, "from_blob: data is null");
  const auto nbytes = static_cast<std::size_t>(extent) * element_size(dtype);
  auto storage = std::make_shared<Storage>(DataPtr(data, nullptr, nullptr, device), nbytes);
  return finish(Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, sizes, strides, 0)), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  const DimVector strides = contiguous_strides(sizes);
  return from_blob(data, sizes, strides.ref(), options);
}

}  // namespace hwaro
