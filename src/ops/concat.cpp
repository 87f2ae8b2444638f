// cat and stack: every input copied into its narrow() slice of one new output.
#include "core/tensor_impl.h"
#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

// Every tensor defined and on the first one's device (argument "tensors", as PyTorch names it).
void check_tensor_list(const char* op, const std::vector<Tensor>& tensors) {
  HWARO_CHECK(!tensors.empty(), op, "(): expected a non-empty list of Tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    HWARO_CHECK(tensors[i].defined(), op, "(): tensor number ", i, " in the list is undefined (default-constructed)");
  }
  for (const Tensor& t : tensors) ops::check_same_device(op, {{"tensors", tensors.front()}, {"tensors", t}});
}

// PyTorch's legacy rule: a 1-D tensor with no elements takes no part in cat, whatever dim is.
bool skipped_by_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  check_tensor_list("cat", tensors);
  DType dtype = tensors.front().dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());
  const Device device = tensors.front().device();

  const Tensor* reference = nullptr;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    HWARO_CHECK(tensors[i].dim() > 0, "cat(): zero-dimensional tensor (at position ", i,
                ") cannot be concatenated; unsqueeze it to 1-D first");
    if (reference == nullptr && !skipped_by_cat(tensors[i])) reference = &tensors[i];
  }
  if (reference == nullptr) return ops::new_tensor({0}, dtype, device);

  const std::int64_t ndim = reference->dim();
  const std::int64_t d = ops::wrap_dim(dim, ndim);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_by_cat(t)) continue;
    HWARO_CHECK(t.dim() == ndim, "cat(): Tensors must have same number of dimensions: got ", ndim, " and ", t.dim(),
                " (tensor number ", i, " in the list)");
    for (std::int64_t k = 0; k < ndim; ++k) {
      HWARO_CHECK(k == d || t.size(k) == reference->size(k), "cat(): Sizes of tensors must match except in dimension ",
                  d, ". Expected size ", reference->size(k), " but got size ", t.size(k), " for tensor number ", i,
                  " in the list (dimension ", k, ")");
    }
    total += t.size(d);
  }

  DimVector sizes(reference->sizes());
  sizes[static_cast<std::size_t>(d)] = total;
  ops::GradScope grad(tensors);
  Tensor out = ops::new_tensor(sizes.ref(), dtype, device);
  std::int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_by_cat(t) || t.size(d) == 0) continue;
    out.narrow(d, offset, t.size(d)).copy_(t);
    offset += t.size(d);
  }
  if (grad.active() && is_floating_point(dtype)) grad.record(out, {.kind = ops::GradOp::Cat, .inputs = tensors, .ints = {d}});
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  check_tensor_list("stack", tensors);
  const Tensor& first = tensors.front();
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    HWARO_CHECK(tensors[i].sizes() == first.sizes(), "stack(): expects each tensor to be equal size, but got ",
                first.sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  const std::int64_t d = ops::wrap_dim(dim, first.dim() + 1);
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) expanded.push_back(t.unsqueeze(d));
  return cat(expanded, d);
}

}  // namespace hwaro
