// View ops: results share storage with their input (and its version counter).
#include <algorithm>

#include "core/tensor_impl.h"
#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace ops {
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset) {
  return Tensor(std::make_shared<TensorImpl>(base.impl()->storage(), base.dtype(), sizes, strides, storage_offset));
}
}  // namespace ops

namespace {

// A view of base made by make_view, with its backward recorded when base needs one.
Tensor recorded_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset,
                     ops::GradOp kind, DimVector ints = {}) {
  Tensor view = ops::make_view(base, sizes, strides, storage_offset);
  ops::GradScope grad({&base});
  if (grad.active()) grad.record(view, {.kind = kind, .inputs = {base}, .ints = std::move(ints)});
  return view;
}

// sizes with one -1 inferred so that the product is numel.
DimVector infer_sizes(IntArrayRef sizes, std::int64_t numel, const char* op) {
  DimVector out(sizes);
  std::int64_t known = 1;
  int infer_at = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      HWARO_CHECK(infer_at < 0, op, ": only one dimension can be inferred (-1), got shape ", sizes);
      infer_at = static_cast<int>(i);
    } else {
      HWARO_CHECK(out[i] >= 0, op, ": invalid shape dimension ", out[i], " in ", sizes);
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    HWARO_CHECK(known != 0 && numel % known == 0, op, ": shape ", sizes, " is invalid for input of size ", numel);
    out[infer_at] = numel / known;
  } else {
    HWARO_CHECK(known == numel, op, ": shape ", sizes, " is invalid for input of size ", numel);
  }
  return out;
}

// Strides for viewing (old_sizes, old_strides) as new_sizes without a copy, or false when the
// memory layout does not allow it (PyTorch's computeStride).
bool view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef new_sizes, DimVector& out) {
  out.assign(new_sizes.size(), 0);
  if (product(old_sizes) == 0 || old_sizes.empty()) {  // no elements, or one (0-dim): any layout works
    out = contiguous_strides(new_sizes);
    return true;
  }
  std::int64_t view_d = static_cast<std::int64_t>(new_sizes.size()) - 1;
  std::int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor Tensor::view(IntArrayRef new_sizes) const {
  const DimVector shape = infer_sizes(new_sizes, numel(), "view");
  DimVector strides;
  HWARO_CHECK(view_strides(sizes(), this->strides(), shape, strides), "view: size ", shape,
              " is not compatible with the input's size ", sizes(), " and stride ", this->strides(),
              " (at least one dimension spans across two contiguous subspaces); use reshape() instead");
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Reshape);
}

Tensor Tensor::reshape(IntArrayRef new_sizes) const {
  const DimVector shape = infer_sizes(new_sizes, numel(), "reshape");
  DimVector strides;
  if (view_strides(sizes(), this->strides(), shape, strides)) {
    return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Reshape);
  }
  return contiguous().view(shape);
}

Tensor Tensor::view_as(const Tensor& other) const { return view(other.sizes()); }

Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  // The dims are checked first, as PyTorch's: a 0-dim tensor takes dims -1 and 0 only (so
  // nn::Flatten's start_dim 1 is an IndexError there), then becomes [1].
  const std::int64_t s = ops::wrap_dim(start_dim, dim());
  const std::int64_t e = ops::wrap_dim(end_dim, dim());
  HWARO_CHECK(s <= e, "flatten: start_dim (", start_dim, ") must not come after end_dim (", end_dim, ")");
  if (dim() == 0) return reshape({1});
  DimVector shape;
  for (std::int64_t d = 0; d < s; ++d) shape.push_back(size(d));
  std::int64_t merged = 1;
  for (std::int64_t d = s; d <= e; ++d) merged *= size(d);
  shape.push_back(merged);
  for (std::int64_t d = e + 1; d < dim(); ++d) shape.push_back(size(d));
  return reshape(shape);
}

Tensor Tensor::squeeze() const {
  DimVector shape, strides;
  for (std::int64_t d = 0; d < dim(); ++d) {
    if (size(d) != 1) {
      shape.push_back(size(d));
      strides.push_back(stride(d));
    }
  }
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Reshape);
}

Tensor Tensor::squeeze(std::int64_t d) const {
  if (dim() == 0) return recorded_view(*this, {}, {}, storage_offset(), ops::GradOp::Reshape);
  const std::int64_t w = ops::wrap_dim(d, dim());
  if (size(w) != 1) return recorded_view(*this, sizes(), strides(), storage_offset(), ops::GradOp::Reshape);
  DimVector shape(sizes()), strides(this->strides());
  shape.erase(static_cast<std::size_t>(w));
  strides.erase(static_cast<std::size_t>(w));
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Reshape);
}

Tensor Tensor::unsqueeze(std::int64_t d) const {
  const std::int64_t w = ops::wrap_dim(d, dim() + 1);
  DimVector shape(sizes()), strides(this->strides());
  const std::int64_t new_stride = w < dim() ? stride(w) * size(w) : 1;
  shape.insert(static_cast<std::size_t>(w), 1);
  strides.insert(static_cast<std::size_t>(w), new_stride);
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Reshape);
}

Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  if (dim() == 0) return *this;
  const std::int64_t a = ops::wrap_dim(dim0, dim());
  const std::int64_t b = ops::wrap_dim(dim1, dim());
  DimVector shape(sizes()), strides(this->strides());
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  DimVector order(static_cast<std::size_t>(dim()));
  for (std::int64_t d = 0; d < dim(); ++d) order[d] = d;
  std::swap(order[a], order[b]);
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Permute, std::move(order));
}

Tensor Tensor::permute(IntArrayRef dims) const {
  HWARO_CHECK(static_cast<std::int64_t>(dims.size()) == dim(), "permute: number of dims (", dims.size(),
              ") must equal the tensor's dimensionality (", dim(), ")");
  DimVector shape(dims.size()), strides(dims.size());
  DimVector order(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = ops::wrap_dim(dims[i], dim());
    HWARO_CHECK(!seen[d], "permute: dim ", dims[i], " appears more than once in ", dims);
    seen[d] = true;
    order[i] = d;
    shape[i] = size(d);
    strides[i] = stride(d);
  }
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Permute, std::move(order));
}

Tensor Tensor::t() const {
  HWARO_CHECK(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", dim(), "-D; use transpose()");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  HWARO_CHECK(dim() > 0, "narrow() cannot be applied to a 0-dim tensor");
  const std::int64_t w = ops::wrap_dim(d, dim());
  const std::int64_t n = size(w);
  if (start < 0) start += n;
  HWARO_CHECK_AS(IndexError, start >= 0 && start <= n, "narrow: start (", start, ") out of range for dimension ",
                 w, " of size ", n);
  HWARO_CHECK_AS(IndexError, length >= 0 && start + length <= n, "narrow: start (", start, ") + length (", length,
                 ") exceeds dimension size (", n, ")");
  DimVector shape(sizes());
  shape[w] = length;
  return recorded_view(*this, shape, strides(), storage_offset() + start * stride(w), ops::GradOp::Slice, {w, start, 1});
}

Tensor Tensor::slice(std::int64_t d, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step) const {
  HWARO_CHECK(dim() > 0, "slice() cannot be applied to a 0-dim tensor");
  HWARO_CHECK(step > 0, "slice: step must be positive, got ", step);
  const std::int64_t w = ops::wrap_dim(d, dim());
  const std::int64_t n = size(w);
  auto clamp_index = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
  const std::int64_t b = clamp_index(start.value_or(0));
  const std::int64_t e = std::max(b, clamp_index(end.value_or(n)));
  DimVector shape(sizes()), strides(this->strides());
  shape[w] = (e - b + step - 1) / step;
  strides[w] *= step;
  return recorded_view(*this, shape, strides, storage_offset() + b * stride(w), ops::GradOp::Slice, {w, b, step});
}

Tensor Tensor::select(std::int64_t d, std::int64_t index) const {
  HWARO_CHECK(dim() > 0, "select() cannot be applied to a 0-dim tensor");
  const std::int64_t w = ops::wrap_dim(d, dim());
  const std::int64_t n = size(w);
  HWARO_CHECK_AS(IndexError, index >= -n && index < n, "select(): index ", index,
                 " out of range for tensor of size ", sizes(), " at dimension ", w);
  if (index < 0) index += n;
  DimVector shape(sizes()), strides(this->strides());
  shape.erase(static_cast<std::size_t>(w));
  strides.erase(static_cast<std::size_t>(w));
  return recorded_view(*this, shape, strides, storage_offset() + index * stride(w), ops::GradOp::Select, {w, index});
}

Tensor Tensor::expand(IntArrayRef new_sizes) const {
  HWARO_CHECK(new_sizes.size() >= static_cast<std::size_t>(dim()), "expand: the number of sizes provided (",
              new_sizes.size(), ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
  const std::size_t lead = new_sizes.size() - static_cast<std::size_t>(dim());
  DimVector shape(new_sizes.size()), strides(new_sizes.size());
  for (std::size_t i = 0; i < new_sizes.size(); ++i) {
    if (i < lead) {
      HWARO_CHECK(new_sizes[i] >= 0, "expand: -1 is not allowed in a leading, non-existing dimension");
      shape[i] = new_sizes[i];
      strides[i] = 0;
      continue;
    }
    const std::int64_t have = size(static_cast<std::int64_t>(i - lead));
    const std::int64_t want = new_sizes[i] == -1 ? have : new_sizes[i];
    HWARO_CHECK(have == want || have == 1, "expand: the expanded size of the tensor (", want,
                ") must match the existing size (", have, ") at non-singleton dimension ", i, "; target sizes ",
                new_sizes, ", tensor sizes ", sizes());
    shape[i] = want;
    strides[i] = have == want ? stride(static_cast<std::int64_t>(i - lead)) : 0;
  }
  return recorded_view(*this, shape, strides, storage_offset(), ops::GradOp::Expand);
}

Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }

std::vector<Tensor> Tensor::split(std::int64_t split_size, std::int64_t d) const {
  HWARO_CHECK(split_size > 0 || (split_size == 0 && size(d) == 0), "split: split_size must be positive, got ",
              split_size);
  const std::int64_t n = size(d);
  std::vector<Tensor> parts;
  for (std::int64_t start = 0; start < n; start += split_size) {
    parts.push_back(narrow(d, start, std::min(split_size, n - start)));
  }
  if (parts.empty()) parts.push_back(*this);
  return parts;
}

std::vector<Tensor> Tensor::chunk(std::int64_t chunks, std::int64_t d) const {
  HWARO_CHECK(chunks > 0, "chunk: chunks must be positive, got ", chunks);
  const std::int64_t n = size(d);
  return split(std::max<std::int64_t>((n + chunks - 1) / chunks, n == 0 ? 0 : 1), d);
}

std::vector<Tensor> Tensor::unbind(std::int64_t d) const {
  std::vector<Tensor> parts;
  for (std::int64_t i = 0; i < size(d); ++i) parts.push_back(select(d, i));
  return parts;
}

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) { return x.split(split_size, dim); }
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) { return x.chunk(chunks, dim); }

}  // namespace hwaro
