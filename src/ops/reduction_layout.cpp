#include "ops/reduction_layout.h"

#include "ops/op_helpers.h"

namespace hwaro::ops {

TensorView ReductionLayout::input_view() const {
  TensorView v = view_of(input);
  v.ndim = 3;
  v.sizes = block_sizes.data();
  v.strides = block_strides.data();
  return v;
}

namespace {

// 1 for each reduced dim of x, 0 for each kept one.
DimVector reduced_mask(const char* op, const Tensor& x, IntArrayRef dims) {
  const std::int64_t ndim = x.dim();
  DimVector reduced(static_cast<std::size_t>(ndim), dims.empty() ? 1 : 0);
  for (std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, ndim);
    if (ndim == 0) continue;  // a 0-dim tensor accepts 0 and -1 and reduces its one element
    HWARO_CHECK(reduced[w] == 0, op, "(): dim ", w, " appears multiple times in the list of dims");
    reduced[w] = 1;
  }
  return reduced;
}

}  // namespace

DimVector reduction_out_sizes(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  const DimVector reduced = reduced_mask(op, x, dims);
  DimVector out;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    if (!reduced[d]) {
      out.push_back(x.size(d));
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

std::int64_t reduction_count(const char* op, const Tensor& x, IntArrayRef dims) {
  const DimVector reduced = reduced_mask(op, x, dims);
  std::int64_t count = 1;
  for (std::int64_t d = 0; d < x.dim(); ++d) count *= reduced[d] ? x.size(d) : 1;
  return count;
}

ReductionLayout reduction_layout(const char* op, const Tensor& x, IntArrayRef dims) {
  const std::int64_t ndim = x.dim();
  const DimVector reduced = reduced_mask(op, x, dims);

  ReductionLayout layout;
  const IntArrayRef sizes = x.sizes();
  std::int64_t first = ndim, last = -1;
  for (std::int64_t d = 0; d < ndim; ++d) {
    layout.kept_sizes.push_back(reduced[d] ? 1 : sizes[d]);
    if (!reduced[d]) layout.squeezed_sizes.push_back(sizes[d]);
    if (reduced[d]) {
      first = std::min(first, d);
      last = d;
    }
  }
  bool consecutive = true;
  for (std::int64_t d = first; d <= last; ++d) consecutive &= reduced[d] != 0;

  if (consecutive) {
    layout.input = x.contiguous();  // no copy when x already is
    for (std::int64_t d = 0; d < ndim; ++d) {
      std::int64_t& part = d < first ? layout.outer : (d <= last ? layout.r : layout.inner);
      part *= sizes[d];
    }
  } else {
    // Kept dims first (in order), then the reduced ones: the output order is unchanged.
    DimVector order;
    for (std::int64_t d = 0; d < ndim; ++d) {
      if (!reduced[d]) order.push_back(d);
    }
    for (std::int64_t d = 0; d < ndim; ++d) {
      if (reduced[d]) order.push_back(d);
    }
    layout.input = x.permute(order.ref()).contiguous();
    for (std::int64_t d = 0; d < ndim; ++d) (reduced[d] ? layout.r : layout.outer) *= sizes[d];
  }
  layout.block_sizes = {layout.outer, layout.r, layout.inner};
  layout.block_strides = {layout.r * layout.inner, layout.inner, 1};
  return layout;
}

KernelArgs reduction_args(const ReductionLayout& layout, std::initializer_list<Tensor> outputs) {
  KernelArgs args;
  for (const Tensor& out : outputs) args.tensors[args.num_tensors++] = view_of(out);
  args.tensors[args.num_tensors++] = layout.input_view();
  args.ints[0] = layout.outer;
  args.ints[1] = layout.r;
  args.ints[2] = layout.inner;
  return args;
}

}  // namespace hwaro::ops
