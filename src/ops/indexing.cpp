// index_select, gather, scatter, scatter_add (and their in-place and method forms), one_hot.
// Shape rules are PyTorch's; index bounds are checked by the kernels (IndexError).
#include "core/tensor_impl.h"
#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

// A 0-d tensor seen as 1-D of one element: the kernels need a dimension to index along.
Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

void check_index_dtype(const char* op, const Tensor& index) {
  HWARO_CHECK(index.dtype() == kInt64, op, "(): Expected dtype int64 for index, but got ", index.dtype(),
              "; convert it with index.to(hw::kInt64)");
}

// PyTorch's gather/scatter shape rule: index.size(d) <= self.size(d) for every d != dim, and
// (scatter) index.size(d) <= src.size(d) for every d; all with the same number of dimensions.
void check_scatter_gather_shapes(const char* op, const Tensor& self, std::int64_t dim, const Tensor& index,
                                 const Tensor* src) {
  HWARO_CHECK(index.dim() == self.dim(), op, "(): Index tensor must have the same number of dimensions as self tensor (",
              self.dim(), "), but got ", index.dim());
  if (src != nullptr) {
    HWARO_CHECK(src->dim() == self.dim(), op, "(): src tensor must have the same number of dimensions as self tensor (",
                self.dim(), "), but got ", src->dim());
  }
  for (std::int64_t d = 0; d < index.dim(); ++d) {
    HWARO_CHECK(d == dim || index.size(d) <= self.size(d), op, "(): Expected index ", index.sizes(),
                " to be no larger than self ", self.sizes(), " apart from dimension ", dim, " (dimension ", d,
                " is larger)");
    if (src != nullptr) {
      HWARO_CHECK(index.size(d) <= src->size(d), op, "(): Expected index ", index.sizes(),
                  " to be no larger than src ", src->sizes(), " (dimension ", d, " is larger)");
    }
  }
}

// Every check of a scatter (before anything runs); returns dim wrapped.
std::int64_t check_scatter(OpId id, const char* op, const Tensor& self, std::int64_t dim, const Tensor& index,
                           const Tensor& src) {
  ops::check_same_device(op, {{"self", self}, {"index", index}, {"src", src}});
  check_index_dtype(op, index);
  HWARO_CHECK(src.dtype() == self.dtype(), op, "(): Expected self.dtype to be equal to src.dtype, but got ",
              self.dtype(), " and ", src.dtype(), "; convert src with src.to(self.dtype())");
  const std::int64_t d = ops::wrap_dim(dim, self.dim());
  check_scatter_gather_shapes(op, self, d, index, &src);
  if (id == OpId::ScatterAdd) {
    HWARO_CHECK(self.dtype() != kBool, op, "(): not supported for bool tensors");
  }
  return d;
}

// Runs a checked Scatter or ScatterAdd kernel into `out` (already holding self's values).
void launch_scatter(OpId id, const Tensor& out, std::int64_t d, const Tensor& index, const Tensor& src) {
  const Tensor out1 = at_least_1d(out), index1 = at_least_1d(index), src1 = at_least_1d(src);
  KernelArgs args;
  args.tensors[0] = ops::view_of(out1);
  args.tensors[1] = ops::view_of(index1);
  args.tensors[2] = ops::view_of(src1);
  args.num_tensors = 3;
  args.ints[0] = d;
  ops::launch(id, out.dtype(), out.device(), args);
}

// scatter / scatter_add: into a copy of self.
Tensor scatter_copy(OpId id, const char* op, const Tensor& self, std::int64_t dim, const Tensor& index,
                    const Tensor& src) {
  const std::int64_t d = check_scatter(id, op, self, dim, index, src);
  ops::GradScope grad({&self, &src});
  Tensor out = self.clone();
  launch_scatter(id, out, d, index, src);
  if (grad.active()) {
    grad.record(out, {.kind = id == OpId::Scatter ? ops::GradOp::Scatter : ops::GradOp::ScatterAdd,
                      .inputs = {self, src}, .saved = {index}, .ints = {d}});
  }
  return out;
}

// scatter_ / scatter_add_: into self.
Tensor& scatter_in_place(OpId id, const char* op, Tensor& self, std::int64_t dim, const Tensor& index,
                         const Tensor& src) {
  const std::int64_t d = check_scatter(id, op, self, dim, index, src);
  ops::check_inplace_grad(op, self, &src);
  ops::check_no_internal_overlap(op, self);
  launch_scatter(id, self, d, index, src);
  ops::bump_version(self);
  return self;
}

}  // namespace

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  ops::check_same_device("index_select", {{"self", x}, {"index", index}});
  HWARO_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32,
              "index_select(): Expected dtype int32 or int64 for index, but got ", index.dtype());
  HWARO_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector (0-D or 1-D), but got ",
              index.dim(), "-D index of shape ", index.sizes());
  const std::int64_t d = ops::wrap_dim(dim, x.dim());
  ops::GradScope grad({&x});
  HWARO_CHECK(x.dim() > 0 || index.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ",
              index.numel(), " value(s)");
  const Tensor x1 = at_least_1d(x);
  const Tensor index1 = at_least_1d(index).to(kInt64);
  DimVector sizes(x1.sizes());
  sizes[static_cast<std::size_t>(d)] = index1.numel();
  Tensor out = ops::new_tensor(sizes.ref(), x.dtype(), x.device());
  KernelArgs args;
  args.tensors[0] = ops::view_of(out);
  args.tensors[1] = ops::view_of(x1);
  args.tensors[2] = ops::view_of(index1);
  args.num_tensors = 3;
  args.ints[0] = d;
  ops::launch(OpId::IndexSelect, x.dtype(), x.device(), args);
  // A 0-d input keeps its 0-d shape (with one index), as in PyTorch.
  const Tensor result = x.dim() == 0 ? out.reshape({}) : out;
  if (grad.active()) grad.record(result, {.kind = ops::GradOp::IndexSelect, .inputs = {x}, .saved = {index1}, .ints = {d}});
  return result;
}

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  ops::check_same_device("gather", {{"self", x}, {"index", index}});
  check_index_dtype("gather", index);
  const std::int64_t d = ops::wrap_dim(dim, x.dim());
  check_scatter_gather_shapes("gather", x, d, index, nullptr);
  ops::GradScope grad({&x});
  Tensor out = ops::new_tensor(index.sizes(), x.dtype(), x.device());
  const Tensor x1 = at_least_1d(x), index1 = at_least_1d(index), out1 = at_least_1d(out);
  KernelArgs args;
  args.tensors[0] = ops::view_of(out1);
  args.tensors[1] = ops::view_of(x1);
  args.tensors[2] = ops::view_of(index1);
  args.num_tensors = 3;
  args.ints[0] = d;
  ops::launch(OpId::Gather, x.dtype(), x.device(), args);
  if (grad.active()) grad.record(out, {.kind = ops::GradOp::Gather, .inputs = {x}, .saved = {index}, .ints = {d}});
  return out;
}

Tensor scatter(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_copy(OpId::Scatter, "scatter", x, dim, index, src);
}

Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_copy(OpId::ScatterAdd, "scatter_add", x, dim, index, src);
}

Tensor one_hot(const Tensor& indices, std::int64_t num_classes) {
  ops::check_defined("one_hot", {{"self", indices}});
  HWARO_CHECK(indices.dtype() == kInt64, "one_hot(): is only applicable to int64 index tensors, but got ",
              indices.dtype(), "; convert with .to(hw::kInt64)");
  HWARO_CHECK(num_classes == -1 || num_classes >= 0, "one_hot(): num_classes must be -1 (infer) or non-negative, got ",
              num_classes);
  if (indices.numel() > 0) {
    const std::int64_t lo = indices.min().item<std::int64_t>();
    const std::int64_t hi = indices.max().item<std::int64_t>();
    HWARO_CHECK(lo >= 0, "one_hot(): Class values must be non-negative, but found ", lo);
    if (num_classes == -1) num_classes = hi + 1;
    HWARO_CHECK(hi < num_classes, "one_hot(): Class values must be smaller than num_classes (", num_classes,
                "), but found ", hi);
  } else {
    HWARO_CHECK(num_classes != -1, "one_hot(): Can not infer the number of classes from an empty tensor; pass num_classes");
  }
  DimVector sizes(indices.sizes());
  sizes.push_back(num_classes);
  Tensor out = zeros(sizes.ref(), {.dtype = kInt64, .device = indices.device()});
  if (indices.numel() == 0) return out;
  DimVector one_sizes(indices.sizes());
  one_sizes.push_back(1);
  const Tensor ones_src = ones({1}, {.dtype = kInt64, .device = indices.device()}).expand(one_sizes.ref());
  scatter_in_place(OpId::Scatter, "one_hot", out, -1, indices.unsqueeze(-1), ones_src);
  return out;
}

Tensor Tensor::index_select(std::int64_t dim, const Tensor& index) const { return hwaro::index_select(*this, dim, index); }
Tensor Tensor::gather(std::int64_t dim, const Tensor& index) const { return hwaro::gather(*this, dim, index); }
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const {
  return hwaro::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const {
  return hwaro::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_in_place(OpId::Scatter, "scatter_", *this, dim, index, src);
}
Tensor& Tensor::scatter_add_(std::int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_in_place(OpId::ScatterAdd, "scatter_add_", *this, dim, index, src);
}

}  // namespace hwaro
