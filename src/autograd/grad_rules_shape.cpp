// Gradient rules of the ops that move elements without arithmetic: views, cat, conversions
// and indexing. Each puts the gradient back where the forward took the elements from.
#include "autograd/grad_rules.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

using K = ops::GradOp;

std::vector<Tensor> reshape_rule(const SavedCall& c, const Tensor& g) { return {g.reshape(c.input_sizes(0))}; }

std::vector<Tensor> expand_rule(const SavedCall& c, const Tensor& g) { return {sum_to(g, c.input_sizes(0))}; }

std::vector<Tensor> permute_rule(const SavedCall& c, const Tensor& g) {
  DimVector inverse(c.ints.size());
  for (std::size_t i = 0; i < c.ints.size(); ++i) inverse[static_cast<std::size_t>(c.ints[i])] = static_cast<std::int64_t>(i);
  return {g.permute(inverse)};
}

// The slice (dim, start, step) or the selected index of a zero gradient receives g.
std::vector<Tensor> slice_rule(const SavedCall& c, const Tensor& g) {
  Tensor gx = zeros(c.input_sizes(0), {.dtype = g.dtype(), .device = g.device()});
  const std::int64_t d = c.ints[0], start = c.ints[1], step = c.ints[2];
  if (g.size(d) > 0) gx.slice(d, start, start + (g.size(d) - 1) * step + 1, step).copy_(g);
  return {gx};
}

std::vector<Tensor> select_rule(const SavedCall& c, const Tensor& g) {
  Tensor gx = zeros(c.input_sizes(0), {.dtype = g.dtype(), .device = g.device()});
  gx.select(c.ints[0], c.ints[1]).copy_(g);
  return {gx};
}

std::vector<Tensor> cat_rule(const SavedCall& c, const Tensor& g) {
  const std::int64_t d = c.ints[0];
  std::vector<Tensor> grads;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const InputMeta& x = c.input_meta[i];
    const bool skipped = x.sizes.size() == 1 && x.sizes[0] == 0;  // cat ignores such inputs
    if (skipped || !c.needs_grad[i]) {
      grads.push_back(skipped && c.needs_grad[i] ? zeros({0}, {.dtype = x.dtype, .device = x.device}) : Tensor());
      if (!skipped) offset += x.sizes[static_cast<std::size_t>(d)];
      continue;
    }
    const std::int64_t length = x.sizes[static_cast<std::size_t>(d)];
    grads.push_back(g.narrow(d, offset, length));
    offset += length;
  }
  return grads;
}

std::vector<Tensor> convert_rule(const SavedCall& c, const Tensor& g) {
  return {g.to(c.input_meta[0].device, c.input_meta[0].dtype)};
}

std::vector<Tensor> index_select_rule(const SavedCall& c, const Tensor& g) {
  const IntArrayRef x_sizes = c.input_sizes(0);
  const Tensor& index = c.saved[0];  // int64, 1-D
  const std::int64_t d = c.ints[0];
  const Tensor g1 = x_sizes.empty() ? g.reshape({1}) : g;
  // Each index, seen at every position of g along d, so scatter_add sums repeats.
  DimVector index_shape(static_cast<std::size_t>(g1.dim()), 1);
  index_shape[static_cast<std::size_t>(d)] = index.numel();
  const Tensor spread = index.reshape(index_shape).expand(g1.sizes()).contiguous();
  const DimVector gx_sizes = x_sizes.empty() ? DimVector{1} : DimVector(x_sizes);
  Tensor gx = zeros(gx_sizes.ref(), {.dtype = g.dtype(), .device = g.device()}).scatter_add(d, spread, g1);
  return {x_sizes.empty() ? gx.reshape({}) : gx};
}

std::vector<Tensor> gather_rule(const SavedCall& c, const Tensor& g) {
  return {zeros(c.input_sizes(0), {.dtype = g.dtype(), .device = g.device()}).scatter_add(c.ints[0], c.saved[0], g)};
}

// scatter: the overwritten positions of self get no gradient; src gets what landed at its index.
std::vector<Tensor> scatter_rule(const SavedCall& c, const Tensor& g) {
  const std::int64_t d = c.ints[0];
  const Tensor& index = c.saved[0];
  Tensor g_self, g_src;
  if (c.needs_grad[0]) {
    g_self = c.kind == K::Scatter ? g.scatter(d, index, zeros(index.sizes(), {.dtype = g.dtype(), .device = g.device()}))
                                  : g;
  }
  if (c.needs_grad[1]) {
    const Tensor gathered = g.gather(d, index);
    if (gathered.sizes() == c.input_sizes(1)) {
      g_src = gathered;
    } else {
      // src larger than index: only its leading block (index's shape) was read.
      g_src = zeros(c.input_sizes(1), {.dtype = g.dtype(), .device = g.device()});
      Tensor block = g_src;
      for (std::int64_t k = 0; k < index.dim(); ++k) block = block.narrow(k, 0, index.size(k));
      block.copy_(gathered);
    }
  }
  return {g_self, g_src};
}

}  // namespace

GradRule shape_rule(ops::GradOp kind) {
  switch (kind) {
    case K::Reshape: return reshape_rule;
    case K::Expand: return expand_rule;
    case K::Permute: return permute_rule;
    case K::Slice: return slice_rule;
    case K::Select: return select_rule;
    case K::Cat: return cat_rule;
    case K::Convert: return convert_rule;
    case K::IndexSelect: return index_select_rule;
    case K::Gather: return gather_rule;
    default: return scatter_rule;
  }
}

}  // namespace hwaro::autograd
