// Primitive reductions: sum, prod, max/min (with indices), amax/amin, argmax/argmin, all/any,
// and mean (sum divided by the count), as free functions and Tensor methods.
#include "hwaro/autograd.h"
#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"
#include "ops/reduction_layout.h"

namespace hwaro {

namespace {

bool is_integer_like(DType dt) { return is_integral(dt) || dt == DType::Bool; }

// Sum or Prod: integer and bool inputs give int64, as PyTorch; `dtype` converts the input first.
Tensor arithmetic_reduce(OpId op, const char* name, const Tensor& x, IntArrayRef dims, bool keepdim,
                         std::optional<DType> dtype) {
  ops::check_defined(name, {{"self", x}});
  ops::GradScope grad({&x});
  ops::ReductionLayout layout = ops::reduction_layout(name, x, dims);
  if (dtype && *dtype != layout.input.dtype()) layout.input = layout.input.to(*dtype);
  const DType in_dtype = layout.input.dtype();
  const DType kernel_out = is_integer_like(in_dtype) ? DType::Int64 : in_dtype;
  Tensor out = ops::new_tensor(layout.out_sizes(keepdim).ref(), kernel_out, x.device());
  KernelArgs args = ops::reduction_args(layout, {out});
  ops::launch(op, in_dtype, x.device(), args);
  const Tensor result = dtype && *dtype != kernel_out ? out.to(*dtype) : out;
  if (grad.active() && is_floating_point(result.dtype())) {
    grad.record(result, {.kind = op == OpId::Sum ? ops::GradOp::Sum : ops::GradOp::Prod, .inputs = {x},
                         .ints = DimVector(dims), .flag = keepdim});
  }
  return result;
}

// PyTorch's errors for an extremum over nothing.
void check_nonempty(const char* name, const Tensor& x, const ops::ReductionLayout& layout, IntArrayRef dims) {
  if (layout.r != 0) return;
  HWARO_CHECK(!dims.empty(), name, "(): Expected reduction dim to be specified for input.numel() == 0. ",
              "Specify the reduction dim with the 'dim' argument.");
  std::int64_t empty_dim = 0;
  for (std::int64_t d : dims) {
    const std::int64_t w = ops::wrap_dim(d, x.dim());
    if (x.dim() > 0 && x.size(w) == 0) empty_dim = w;
  }
  HWARO_CHECK(false, name, "(): Expected reduction dim ", empty_dim, " to have non-zero size.");
}

// Max or Min over dims: values and int64 indices into the (flattened) reduced dims.
std::tuple<Tensor, Tensor> extremum(OpId op, const char* name, const Tensor& x, IntArrayRef dims, bool keepdim) {
  ops::check_defined(name, {{"self", x}});
  ops::GradScope grad({&x});
  const ops::ReductionLayout layout = ops::reduction_layout(name, x, dims);
  check_nonempty(name, x, layout, dims);
  const DimVector& sizes = layout.out_sizes(keepdim);
  Tensor values = ops::new_tensor(sizes.ref(), x.dtype(), x.device());
  Tensor indices = ops::new_tensor(sizes.ref(), DType::Int64, x.device());
  KernelArgs args = ops::reduction_args(layout, {values, indices});
  ops::launch(op, x.dtype(), x.device(), args);
  if (grad.active()) grad.record(values, {.kind = ops::GradOp::Extremum, .inputs = {x}, .ints = DimVector(dims), .flag = keepdim});
  return {values, indices};
}

// max(dim) / min(dim): PyTorch gives the whole gradient to the element at the returned index
// (amax/amin and the all-dims max()/min() split it evenly among ties, which the Extremum rule
// does). So where a gradient is wanted the kernel runs unrecorded and the values are gathered at
// its indices, which records the gather's gradient: a scatter to exactly those elements.
std::tuple<Tensor, Tensor> extremum_along(OpId op, const char* name, const Tensor& x, std::int64_t dim, bool keepdim) {
  ops::check_defined(name, {{"self", x}});
  if (!is_grad_enabled() || !x.requires_grad() || x.dim() == 0) return extremum(op, name, x, dim, keepdim);
  Tensor indices;
  {
    NoGradGuard no_grad;
    indices = std::get<1>(extremum(op, name, x, dim, keepdim));
  }
  const std::int64_t d = ops::wrap_dim(dim, x.dim());
  const Tensor values = x.gather(d, keepdim ? indices : indices.unsqueeze(d));
  return {keepdim ? values : values.squeeze(d), indices};
}

// All or Any: a bool result; an element is true when it is not zero.
Tensor logical_reduce(OpId op, const char* name, const Tensor& x, IntArrayRef dims, bool keepdim) {
  ops::check_defined(name, {{"self", x}});
  const ops::ReductionLayout layout = ops::reduction_layout(name, x, dims);
  Tensor out = ops::new_tensor(layout.out_sizes(keepdim).ref(), DType::Bool, x.device());
  KernelArgs args = ops::reduction_args(layout, {out});
  ops::launch(op, x.dtype(), x.device(), args);
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return arithmetic_reduce(OpId::Sum, "sum", x, dims, keepdim, dtype);
}
Tensor Tensor::sum(std::optional<DType> dtype) const { return hwaro::sum(*this, {}, false, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return hwaro::sum(*this, dims, keepdim, dtype);
}

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  ops::check_defined("mean", {{"self", x}});
  HWARO_CHECK(x.is_floating_point(), "mean(): could not infer output dtype. Input dtype must be either a floating ",
              "point or complex dtype. Got: ", x.dtype(), "; convert it with .to(hw::kFloat32) first");
  const std::int64_t count = ops::reduction_count("mean", x, dims);
  // 16-bit floats: the float32 sum is divided before the one rounding to the input's dtype.
  const bool narrow = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  Tensor out = hwaro::sum(x, dims, keepdim, narrow ? std::optional<DType>(DType::Float32) : std::nullopt);
  // An empty reduction is 0 / 0 = NaN, as PyTorch.
  out = out.div(static_cast<double>(count));
  return narrow ? out.to(x.dtype()) : out;
}
Tensor Tensor::mean() const { return hwaro::mean(*this); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const { return hwaro::mean(*this, dims, keepdim); }

Tensor Tensor::prod() const { return arithmetic_reduce(OpId::Prod, "prod", *this, {}, false, std::nullopt); }
Tensor Tensor::prod(std::int64_t dim, bool keepdim) const {
  return arithmetic_reduce(OpId::Prod, "prod", *this, dim, keepdim, std::nullopt);
}

Tensor Tensor::max() const { return std::get<0>(extremum(OpId::Max, "max", *this, {}, false)); }
Tensor Tensor::min() const { return std::get<0>(extremum(OpId::Min, "min", *this, {}, false)); }
std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim) const {
  return extremum_along(OpId::Max, "max", *this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(std::int64_t dim, bool keepdim) const {
  return extremum_along(OpId::Min, "min", *this, dim, keepdim);
}
// amax/amin with no dims reduce everything, as torch.amax(x, dim=()).
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const {
  return std::get<0>(extremum(OpId::Max, "amax", *this, dims, keepdim));
}
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const {
  return std::get<0>(extremum(OpId::Min, "amin", *this, dims, keepdim));
}
// The flattened forms index the row-major elements: the all-dims layout is x.contiguous().
Tensor Tensor::argmax() const { return std::get<1>(extremum(OpId::Max, "argmax", *this, {}, false)); }
Tensor Tensor::argmin() const { return std::get<1>(extremum(OpId::Min, "argmin", *this, {}, false)); }
Tensor Tensor::argmax(std::int64_t dim, bool keepdim) const {
  return std::get<1>(extremum(OpId::Max, "argmax", *this, dim, keepdim));
}
Tensor Tensor::argmin(std::int64_t dim, bool keepdim) const {
  return std::get<1>(extremum(OpId::Min, "argmin", *this, dim, keepdim));
}

Tensor Tensor::all() const { return logical_reduce(OpId::All, "all", *this, {}, false); }
Tensor Tensor::all(std::int64_t dim, bool keepdim) const { return logical_reduce(OpId::All, "all", *this, dim, keepdim); }
Tensor Tensor::any() const { return logical_reduce(OpId::Any, "any", *this, {}, false); }
Tensor Tensor::any(std::int64_t dim, bool keepdim) const { return logical_reduce(OpId::Any, "any", *this, dim, keepdim); }

}  // namespace hwaro
