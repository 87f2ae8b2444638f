// functional::pad (torch.nn.functional.pad), composed from narrow, cat, full and index_select, so
// that its gradient, devices and dtypes come from those ops. Constant padding crops negative pads
// with narrow and joins value-filled blocks to each side with cat; reflect, replicate and circular
// padding pick each output position's source element with one index_select per padded dim (whose
// gradient sums the repeats).
#include <algorithm>
#include <vector>

#include "hwaro/nn/functional.h"
#include "hwaro/ops.h"

namespace hwaro::nn::functional {
namespace {

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant: return "constant";
    case PadMode::Reflect: return "reflect";
    case PadMode::Replicate: return "replicate";
    case PadMode::Circular: return "circular";
  }
  return "unknown";
}

// What is added before and after the elements of one dim (negative: that many are cropped).
struct DimPad {
  std::int64_t dim, before, after;
};

// pad's pairs start from the last dim: (pad[0], pad[1]) is the last dim's, (pad[2], pad[3]) the one before.
std::vector<DimPad> dim_pads(const Tensor& x, IntArrayRef pad) {
  std::vector<DimPad> pads;
  for (std::size_t i = 0; i < pad.size() / 2; ++i) {
    pads.push_back({x.dim() - 1 - static_cast<std::int64_t>(i), pad[2 * i], pad[2 * i + 1]});
  }
  return pads;
}

Tensor constant_pad(const Tensor& x, const std::vector<DimPad>& pads, double value) {
  Tensor out = x;
  bool copied = false;
  for (const DimPad& p : pads) {
    const std::int64_t size = out.size(p.dim);
    const std::int64_t crop_before = std::max<std::int64_t>(-p.before, 0);
    const std::int64_t crop_after = std::max<std::int64_t>(-p.after, 0);
    HWARO_CHECK(crop_before + crop_after <= size, "pad: constant padding (", p.before, ", ", p.after, ") of dim ",
                p.dim, " crops ", crop_before + crop_after, " elements from a dim of size ", size,
                "; negative pads may crop at most the whole dim");
    out = out.narrow(p.dim, crop_before, size - crop_before - crop_after);
    const auto filled = [&](std::int64_t length) {
      std::vector<std::int64_t> shape = out.sizes().vec();
      shape[static_cast<std::size_t>(p.dim)] = length;
      return full(shape, value, {.dtype = x.dtype(), .device = x.device()});
    };
    std::vector<Tensor> pieces;
    if (p.before > 0) pieces.push_back(filled(p.before));
    pieces.push_back(out);
    if (p.after > 0) pieces.push_back(filled(p.after));
    if (pieces.size() > 1) {
      out = cat(pieces, p.dim);
      copied = true;
    }
  }
  // Cropping alone leaves a view of x; PyTorch's pad always returns a tensor of its own.
  return copied ? out : out.clone();
}

// The input element that a padded position p copies (p < 0 or p >= size: in the padding).
std::int64_t source_of(PadMode mode, std::int64_t p, std::int64_t size) {
  switch (mode) {
    case PadMode::Reflect: return p < 0 ? -p : (p >= size ? 2 * (size - 1) - p : p);
    case PadMode::Replicate: return std::clamp<std::int64_t>(p, 0, size - 1);
    default: return ((p % size) + size) % size;  // Circular (constant padding does not come here)
  }
}

// PyTorch's limits for one dim of reflect, replicate and circular padding; `size` is what the
// dim has when the padding is added (for circular, after the negative pads' crop).
void check_dim_pad(PadMode mode, const DimPad& p, std::int64_t size, bool cropped) {
  const char* name = mode_name(mode);
  HWARO_CHECK(size > 0, "pad: ", name, " padding (", p.before, ", ", p.after, ") of dim ", p.dim,
              " needs a non-empty dim, got size 0", cropped ? " after the crop" : "");
  if (mode == PadMode::Reflect) {
    HWARO_CHECK(p.before < size && p.after < size, "pad: reflect padding (", p.before, ", ", p.after, ") of dim ",
                p.dim, " must be smaller than the dim's size ", size, " on each side");
  }
  if (mode == PadMode::Circular) {
    HWARO_CHECK(p.before <= size && p.after <= size, "pad: circular padding (", p.before, ", ", p.after, ") of dim ",
                p.dim, " would wrap around more than once: each pad must be at most the dim's size ", size,
                cropped ? " after the crop" : "");
  } else {
    const std::int64_t out_size = size + p.before + p.after;
    HWARO_CHECK(out_size >= 1, "pad: ", name, " padding (", p.before, ", ", p.after, ") of dim ", p.dim, " of size ",
                size, " leaves ", out_size, " elements");
  }
}

Tensor indexed_pad(const Tensor& x, PadMode mode, const std::vector<DimPad>& pads) {
  Tensor out = x;
  bool copied = false;
  for (const DimPad& p : pads) {
    std::int64_t before = p.before, after = p.after;
    const std::int64_t crop_before = std::max<std::int64_t>(-before, 0), crop_after = std::max<std::int64_t>(-after, 0);
    const bool cropped_first = mode == PadMode::Circular && crop_before + crop_after > 0;
    if (cropped_first) {
      // As PyTorch's: negative pads crop first, and the wrap-around copies from what is left.
      HWARO_CHECK(crop_before + crop_after <= out.size(p.dim), "pad: circular padding (", p.before, ", ", p.after,
                  ") of dim ", p.dim, " crops more than its size ", out.size(p.dim));
      out = out.narrow(p.dim, crop_before, out.size(p.dim) - crop_before - crop_after);
      before = std::max<std::int64_t>(before, 0);
      after = std::max<std::int64_t>(after, 0);
    }
    if (before == 0 && after == 0) continue;
    const std::int64_t size = out.size(p.dim);
    check_dim_pad(mode, p, size, cropped_first);
    // Reflect and replicate read the uncropped dim, as PyTorch's kernels: a negative pad only
    // shifts which padded positions are kept.
    std::vector<std::int64_t> sources(static_cast<std::size_t>(size + before + after));
    for (std::size_t o = 0; o < sources.size(); ++o) {
      sources[o] = source_of(mode, static_cast<std::int64_t>(o) - before, size);
    }
    out = index_select(out, p.dim, tensor(sources, {.dtype = kInt64, .device = x.device()}));
    copied = true;
  }
  return copied ? out : out.clone();
}

}  // namespace

Tensor pad(const Tensor& x, IntArrayRef pad, PadMode mode, double value) {
  HWARO_CHECK(x.defined(), "pad: input is an undefined tensor");
  HWARO_CHECK(pad.size() % 2 == 0, "pad: expected (before, after) pairs, one per padded dim from the last, got ",
              pad.size(), " values ", pad);
  const std::int64_t padded_dims = static_cast<std::int64_t>(pad.size() / 2);
  HWARO_CHECK(padded_dims <= x.dim(), "pad: ", pad.size(), " values pad ", padded_dims, " dims, but the input is ",
              x.dim(), "-D of shape ", x.sizes());
  if (mode == PadMode::Constant) return constant_pad(x, dim_pads(x, pad), value);
  const char* name = mode_name(mode);
  HWARO_CHECK(value == 0.0, "pad: ", name, " padding takes no value (only constant padding does), got ", value);
  HWARO_CHECK(padded_dims >= 1 && padded_dims <= 3 && (x.dim() == padded_dims + 1 || x.dim() == padded_dims + 2),
              "pad: ", name, " padding pads the last 1, 2 or 3 dims of an input with one or two more ",
              "([C, *] or [N, C, *]): ", padded_dims, " padded dims need a ", padded_dims + 1, "-D or ",
              padded_dims + 2, "-D input, got ", x.dim(), "-D of shape ", x.sizes(),
              "; use constant padding for other shapes");
  if (mode != PadMode::Circular) {
    // As PyTorch's reflection and replication pads: only a batch dim may be empty, also one that
    // is not padded ([N, C, *] with a batch dim; [C, *] has none).
    const std::int64_t first = x.dim() == padded_dims + 2 ? 1 : 0;
    for (std::int64_t d = first; d < x.dim(); ++d) {
      HWARO_CHECK(x.size(d) > 0, "pad: ", name, " padding needs every dim but the batch dim non-empty, got input of ",
                  "shape ", x.sizes(), " (dim ", d, " is empty)");
    }
  }
  return indexed_pad(x, mode, dim_pads(x, pad));
}

}  // namespace hwaro::nn::functional
