// default_collate: stacks the examples of a batch along a new dim 0.
#include <cstring>

#include "hwaro/data/dataloader.h"
#include "hwaro/ops.h"

namespace hwaro::data {

Tensor stack_into(const std::vector<Tensor>& tensors, BatchAllocator& allocator, const char* what) {
  HWARO_CHECK(!tensors.empty(), "collate: a batch needs at least one example");
  const Tensor& first = tensors.front();
  HWARO_CHECK(first.defined(), "collate: example 0 of the batch has an undefined ", what, " tensor");
  std::vector<std::int64_t> sizes{static_cast<std::int64_t>(tensors.size())};
  for (std::int64_t s : first.sizes()) sizes.push_back(s);
  // Examples already on a device (a TensorDataset of GPU tensors) are stacked there, as PyTorch's
  // default_collate keeps them; pinning is for host memory only.
  Tensor out = first.is_cpu() ? allocator.empty(sizes, first.dtype())
                              : hwaro::empty(sizes, {.dtype = first.dtype(), .device = first.device()});
  const std::size_t row_bytes = first.nbytes();
  auto* dst = static_cast<char*>(out.data_ptr());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    HWARO_CHECK(t.defined() && t.sizes() == first.sizes() && t.dtype() == first.dtype(), "collate: example ", i,
                " of the batch has ", what, " of shape ", (t.defined() ? t.sizes() : IntArrayRef{}), " and dtype ",
                (t.defined() ? t.dtype() : first.dtype()), " but example 0 has shape ", first.sizes(), " and dtype ",
                first.dtype(), "; every example must have the same shape and dtype (or pass a custom collate)");
    if (t.is_cpu() && t.is_contiguous()) {
      // The common case, kept to one memcpy: the per-batch overhead is what small samples pay for.
      if (row_bytes > 0) std::memcpy(dst + i * row_bytes, t.data_ptr(), row_bytes);  // empty: null pointers
    } else {
      out.select(0, static_cast<std::int64_t>(i)).copy_(t);
    }
  }
  return out;
}

Batch default_collate(std::vector<Example>& examples, BatchAllocator& allocator) {
  std::vector<Tensor> data, target;
  data.reserve(examples.size());
  target.reserve(examples.size());
  for (Example& e : examples) {
    data.push_back(std::move(e.data));
    target.push_back(std::move(e.target));
  }
  return {stack_into(data, allocator, "data"), stack_into(target, allocator, "target")};
}

}  // namespace hwaro::data
