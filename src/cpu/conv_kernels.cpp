// Conv2d, Conv2dBackwardInput and Conv2dBackwardWeight for float32 on the CPU, through oneDNN
// (Debian's libdnnl-dev): its direct convolution with JIT kernels for the CPU it runs on, the
// path LibTorch takes on the CPU too. Tensors arrive in NCHW / OIHW; each primitive is created
// with format `any`, so oneDNN picks its blocked layouts, and the operands are reordered into
// them and the result back (in the CNN step the reorders take about a seventh of the time of
// the convolutions; plain NCHW primitives measured slower still). oneDNN keeps a cache of
// primitives by their description, so a layer seen before costs no new JIT compilation.
//
// Threads: oneDNN here is built on OpenMP, whose idle threads spin for milliseconds after each
// parallel region, on the cores that hwaro's own pool and OpenBLAS need next (on 2 cores that
// made a CNN step 1.6x slower). So oneDNN runs single-threaded, once per slice of the batch,
// on hwaro's pool: the images are independent in forward and backward-input, and backward-weight
// sums the slices' partial gradients.
// Without oneDNN (HWARO_WITH_ONEDNN unset) no kernel is registered and nn/functional_conv.cpp
// takes the im2col + GEMM path, as it does for the other dtypes and devices.
#include "cpu/kernel_families.h"

#ifdef HWARO_WITH_ONEDNN
#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <vector>

#include "cpu/thread_pool.h"
#include "hwaro/errors.h"

namespace hwaro::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// The geometry of one convolution, in oneDNN's terms (ints = sh, sw, ph, pw, dh, dw, groups).
struct ConvGeometry {
  memory::dims src, weights, bias, dst, strides, dilates, pad_l, pad_r;
  bool grouped = false;

  memory::desc plain(const memory::dims& dims, tag t) const { return {dims, memory::data_type::f32, t}; }
  memory::desc any(const memory::dims& dims) const { return {dims, memory::data_type::f32, tag::any}; }
  tag weights_tag() const { return grouped ? tag::goihw : tag::oihw; }
};

// `batch` images of x and out (a slice of the batch).
ConvGeometry geometry(const TensorView& x, const TensorView& weight, const TensorView& out, const KernelArgs& a,
                      std::int64_t batch) {
  ConvGeometry g;
  const std::int64_t groups = a.ints[6];
  g.src = {batch, x.sizes[1], x.sizes[2], x.sizes[3]};
  g.dst = {batch, out.sizes[1], out.sizes[2], out.sizes[3]};
  g.grouped = groups > 1;
  g.weights = g.grouped ? memory::dims{groups, weight.sizes[0] / groups, weight.sizes[1], weight.sizes[2], weight.sizes[3]}
                        : memory::dims{weight.sizes[0], weight.sizes[1], weight.sizes[2], weight.sizes[3]};
  g.bias = {weight.sizes[0]};
  g.strides = {a.ints[0], a.ints[1]};
  g.dilates = {a.ints[4] - 1, a.ints[5] - 1};  // oneDNN counts the gaps: 0 is a plain kernel
  g.pad_l = {a.ints[2], a.ints[3]};
  // The right padding that makes oneDNN's output size equal PyTorch's floor rule.
  for (int axis = 0; axis < 2; ++axis) {
    const std::int64_t kernel_span = (weight.sizes[2 + axis] - 1) * a.ints[4 + axis] + 1;
    g.pad_r.push_back((g.dst[2 + axis] - 1) * a.ints[axis] + kernel_span - g.src[2 + axis] - g.pad_l[axis]);
  }
  return g;
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvGeometry& g, bool with_bias) {
  const auto alg = dnnl::algorithm::convolution_direct;
  const auto prop = dnnl::prop_kind::forward_training;
  const auto desc = with_bias ? dnnl::convolution_forward::desc(prop, alg, g.any(g.src), g.any(g.weights),
                                                                g.plain(g.bias, tag::x), g.any(g.dst), g.strides,
                                                                g.dilates, g.pad_l, g.pad_r)
                              : dnnl::convolution_forward::desc(prop, alg, g.any(g.src), g.any(g.weights),
                                                                g.any(g.dst), g.strides, g.dilates, g.pad_l, g.pad_r);
  return {desc, engine()};
}

// A tensor's memory as oneDNN sees it in `wanted`'s layout: the tensor itself when the layouts
// agree, else a new buffer (filled by a reorder when `fill`). (A dnnl::memory is a shared
// handle, so these pass it by value.)
memory in_layout(memory user, const memory::desc& wanted, dnnl::stream& s, bool fill) {
  if (user.get_desc() == wanted) return user;
  memory m(wanted, engine());
  if (fill) dnnl::reorder(user, m).execute(s, user, m);
  return m;
}

void copy_back(memory from, memory user, dnnl::stream& s) {
  if (from != user) dnnl::reorder(from, user).execute(s, from, user);
}

// Runs fn(first_image, images, slice) for slices of the batch of n images on hwaro's pool, each
// slice's oneDNN call single-threaded (see the top of this file).
template <typename F> void for_batch_slices(std::int64_t n, F&& fn) {
  const std::int64_t slices = std::min<std::int64_t>(n, get_num_threads());
  parallel_for(0, slices, 1, [&](std::int64_t begin, std::int64_t end) {
    omp_set_num_threads(1);
    for (std::int64_t slice = begin; slice < end; ++slice) {
      const std::int64_t first = n * slice / slices, last = n * (slice + 1) / slices;
      fn(first, last - first, slice);
    }
  });
}

// Element offset of image `first` in an [N, ...] tensor.
float* image(const TensorView& t, std::int64_t first) {
  return t.ptr<float>() + first * (t.numel() / t.sizes[0]);
}

template <typename F> void translating_errors(const char* op, F&& f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    HWARO_CHECK(false, op, ": oneDNN failed: ", e.what(), " (status ", static_cast<int>(e.status), ")");
  }
}

// tensors: out [N, O, oh, ow], x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] (data null: none)
void conv2d_forward(const KernelArgs& a) {
  translating_errors("conv2d", [&] {
    const bool with_bias = a[3].data != nullptr;
    for_batch_slices(a[1].sizes[0], [&](std::int64_t first, std::int64_t images, std::int64_t) {
      const ConvGeometry g = geometry(a[1], a[2], a[0], a, images);
      const auto pd = forward_pd(g, with_bias);
      dnnl::stream s(engine());
      memory user_src(g.plain(g.src, tag::nchw), engine(), image(a[1], first));
      memory user_weights(g.plain(g.weights, g.weights_tag()), engine(), a[2].data);
      memory user_dst(g.plain(g.dst, tag::nchw), engine(), image(a[0], first));
      memory src = in_layout(user_src, pd.src_desc(), s, true);
      memory weights = in_layout(user_weights, pd.weights_desc(), s, true);
      memory dst = in_layout(user_dst, pd.dst_desc(), s, false);
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
      if (with_bias) args.emplace(DNNL_ARG_BIAS, memory(g.plain(g.bias, tag::x), engine(), a[3].data));
      dnnl::convolution_forward(pd).execute(s, args);
      copy_back(dst, user_dst, s);
      s.wait();
    });
  });
}

// tensors: grad_x [N, C, H, W], grad_out [N, O, oh, ow], weight [O, C/groups, kh, kw]
void conv2d_backward_input(const KernelArgs& a) {
  translating_errors("conv2d backward (input)", [&] {
    for_batch_slices(a[0].sizes[0], [&](std::int64_t first, std::int64_t images, std::int64_t) {
      const ConvGeometry g = geometry(a[0], a[2], a[1], a, images);
      const auto desc = dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, g.any(g.src),
                                                              g.any(g.weights), g.any(g.dst), g.strides, g.dilates,
                                                              g.pad_l, g.pad_r);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, engine(), forward_pd(g, false));
      dnnl::stream s(engine());
      memory user_diff_src(g.plain(g.src, tag::nchw), engine(), image(a[0], first));
      memory user_diff_dst(g.plain(g.dst, tag::nchw), engine(), image(a[1], first));
      memory user_weights(g.plain(g.weights, g.weights_tag()), engine(), a[2].data);
      memory diff_dst = in_layout(user_diff_dst, pd.diff_dst_desc(), s, true);
      memory weights = in_layout(user_weights, pd.weights_desc(), s, true);
      memory diff_src = in_layout(user_diff_src, pd.diff_src_desc(), s, false);
      dnnl::convolution_backward_data(pd).execute(
          s, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DIFF_SRC, diff_src}});
      copy_back(diff_src, user_diff_src, s);
      s.wait();
    });
  });
}

// tensors: grad_weight [O, C/groups, kh, kw], grad_bias [O] (data null: none), x [N, C, H, W],
// grad_out [N, O, oh, ow]
void conv2d_backward_weight(const KernelArgs& a) {
  translating_errors("conv2d backward (weight)", [&] {
    const bool with_bias = a[1].data != nullptr;
    const std::int64_t weight_numel = a[0].numel(), bias_numel = with_bias ? a[1].numel() : 0;
    if (a[2].sizes[0] == 0) {  // an empty batch: the gradients are empty sums
      std::fill_n(a[0].ptr<float>(), weight_numel, 0.0f);
      if (with_bias) std::fill_n(a[1].ptr<float>(), bias_numel, 0.0f);
      return;
    }
    const std::int64_t slices = std::min<std::int64_t>(a[2].sizes[0], get_num_threads());
    // Slice 0 writes the outputs; the others write partial gradients here, summed below.
    std::vector<float> partial(static_cast<std::size_t>((slices - 1) * (weight_numel + bias_numel)));
    for_batch_slices(a[2].sizes[0], [&](std::int64_t first, std::int64_t images, std::int64_t slice) {
      float* diff_weights_out = slice == 0 ? a[0].ptr<float>() : partial.data() + (slice - 1) * weight_numel;
      float* diff_bias_out = slice == 0 ? a[1].ptr<float>()
                                        : partial.data() + (slices - 1) * weight_numel + (slice - 1) * bias_numel;
      const ConvGeometry g = geometry(a[2], a[0], a[3], a, images);
      const auto alg = dnnl::algorithm::convolution_direct;
      const auto desc = with_bias ? dnnl::convolution_backward_weights::desc(
                                        alg, g.any(g.src), g.any(g.weights), g.plain(g.bias, tag::x), g.any(g.dst),
                                        g.strides, g.dilates, g.pad_l, g.pad_r)
                                  : dnnl::convolution_backward_weights::desc(alg, g.any(g.src), g.any(g.weights),
                                                                             g.any(g.dst), g.strides, g.dilates,
                                                                             g.pad_l, g.pad_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, engine(), forward_pd(g, with_bias));
      dnnl::stream s(engine());
      memory user_src(g.plain(g.src, tag::nchw), engine(), image(a[2], first));
      memory user_diff_dst(g.plain(g.dst, tag::nchw), engine(), image(a[3], first));
      memory user_diff_weights(g.plain(g.weights, g.weights_tag()), engine(), diff_weights_out);
      memory src = in_layout(user_src, pd.src_desc(), s, true);
      memory diff_dst = in_layout(user_diff_dst, pd.diff_dst_desc(), s, true);
      memory diff_weights = in_layout(user_diff_weights, pd.diff_weights_desc(), s, false);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_WEIGHTS, diff_weights}};
      if (with_bias) args.emplace(DNNL_ARG_DIFF_BIAS, memory(g.plain(g.bias, tag::x), engine(), diff_bias_out));
      dnnl::convolution_backward_weights(pd).execute(s, args);
      copy_back(diff_weights, user_diff_weights, s);
      s.wait();
    });
    for (std::int64_t slice = 1; slice < slices; ++slice) {
      const float* w = partial.data() + (slice - 1) * weight_numel;
      for (std::int64_t i = 0; i < weight_numel; ++i) a[0].ptr<float>()[i] += w[i];
      const float* b = partial.data() + (slices - 1) * weight_numel + (slice - 1) * bias_numel;
      for (std::int64_t i = 0; i < bias_numel; ++i) a[1].ptr<float>()[i] += b[i];
    }
  });
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table.set(OpId::Conv2d, DType::Float32, &conv2d_forward);
  table.set(OpId::Conv2dBackwardInput, DType::Float32, &conv2d_backward_input);
  table.set(OpId::Conv2dBackwardWeight, DType::Float32, &conv2d_backward_weight);
}

}  // namespace hwaro::cpu

#else

namespace hwaro::cpu {
// Built without oneDNN: no convolution kernels, so convolution takes the im2col + GEMM path.
void register_conv_kernels(KernelTable&) {}
}  // namespace hwaro::cpu

#endif
