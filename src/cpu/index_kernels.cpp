// IndexSelect, Gather, Scatter and ScatterAdd on the CPU.
//
// All four are one loop: three views (out, index, data) walked over one iteration shape with
// strided_for_each, where the indexed tensor is seen with stride 0 along `dim` and the index
// value times its real stride along `dim` is added to its pointer (PyTorch's TensorIterator
// trick). Indices are validated in a read-only pass first, so a bad index throws IndexError
// before anything is read or written out of bounds (and before an in-place scatter_ changes
// anything).
#include <atomic>
#include <mutex>

#include "core/dtype_dispatch.h"
#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/strided_loop.h"
#include "kernels/cast.h"

namespace hwaro::cpu {
namespace {

// Throws IndexError when an element of `index` (int64) is outside [0, bound).
void check_indices(const TensorView& index, std::int64_t dim, std::int64_t bound) {
  std::atomic<bool> found{false};
  std::mutex mutex;
  std::int64_t bad = 0;
  const TensorView* views[1] = {&index};
  strided_for_each<1>(views, [&](char* const* p, const std::int64_t* s, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = *reinterpret_cast<const std::int64_t*>(p[0] + i * s[0]);
      if (v < 0 || v >= bound) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!found.exchange(true)) bad = v;
        return;
      }
    }
  });
  HWARO_CHECK_AS(IndexError, !found.load(), "index ", bad, " is out of bounds for dimension ", dim, " with size ",
                 bound);
}

// Three views over one iteration shape; the sizes and strides live here.
struct IndexLoop {
  int ndim = 0;
  std::int64_t sizes[kMaxLoopDims] = {};
  std::int64_t strides[3][kMaxLoopDims] = {};
  TensorView views[3];

  // shape: the iteration shape (ndim >= 1); strides[k]: view k's element strides in shape's order.
  // dim_innermost: reorder so that `dim` is the innermost dimension, which makes each run of
  // strided_for_each one whole line along dim: a scatter's writes to one output element then all
  // happen on one thread, in index order (race-free and deterministic).
  IndexLoop(const TensorView* const base[3], const std::int64_t* shape, int n, const std::int64_t* const in_strides[3],
            std::int64_t dim, bool dim_innermost)
      : ndim(n) {
    int order[kMaxLoopDims];
    int j = 0;
    for (int d = 0; d < n; ++d) {
      if (!dim_innermost || d != dim) order[j++] = d;
    }
    if (dim_innermost) order[j] = static_cast<int>(dim);
    for (int d = 0; d < n; ++d) {
      sizes[d] = shape[order[d]];
      for (int k = 0; k < 3; ++k) strides[k][d] = in_strides[k][order[d]];
    }
    for (int k = 0; k < 3; ++k) {
      views[k] = *base[k];
      views[k].ndim = n;
      views[k].sizes = sizes;
      views[k].strides = strides[k];
    }
  }
  template <typename Inner> void run(Inner&& inner, bool dim_innermost) {
    const TensorView* v[3] = {&views[0], &views[1], &views[2]};
    // With dim innermost a run must not be split over threads: a grain of the whole line.
    const std::int64_t grain = dim_innermost ? std::max<std::int64_t>(kElementwiseGrain, sizes[ndim - 1])
                                             : kElementwiseGrain;
    strided_for_each<3>(v, inner, grain);
  }
};

// The element strides of t with its stride along dim replaced by 0.
void strides_without_dim(const TensorView& t, std::int64_t dim, std::int64_t* out) {
  for (int d = 0; d < t.ndim; ++d) out[d] = d == dim ? 0 : t.strides[d];
}

// out[i] = data[index[i] * step] along each run; views (out, index, data).
template <typename T> void gather_runs(IndexLoop& loop, std::int64_t step_elements) {
  const std::int64_t step = step_elements * static_cast<std::int64_t>(sizeof(T));
  loop.run(
      [step](char* const* p, const std::int64_t* s, std::int64_t n) {
        if (s[0] == sizeof(T) && s[1] == 0 && s[2] == sizeof(T)) {
          // One index for the whole run (index_select of rows, an embedding lookup): a plain copy.
          T* o = reinterpret_cast<T*>(p[0]);
          const T* x = reinterpret_cast<const T*>(p[2] + *reinterpret_cast<const std::int64_t*>(p[1]) * step);
          for (std::int64_t i = 0; i < n; ++i) o[i] = x[i];
        } else if (s[0] == sizeof(T) && s[1] == sizeof(std::int64_t) && s[2] == 0) {  // contiguous out and index
          T* o = reinterpret_cast<T*>(p[0]);
          const auto* idx = reinterpret_cast<const std::int64_t*>(p[1]);
          const char* data = p[2];
          for (std::int64_t i = 0; i < n; ++i) o[i] = *reinterpret_cast<const T*>(data + idx[i] * step);
        } else {
          for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t idx = *reinterpret_cast<const std::int64_t*>(p[1] + i * s[1]);
            *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[2] + i * s[2] + idx * step);
          }
        }
      },
      false);
}

template <typename T> struct IndexSelectKernel {
  // tensors: out, in, index (int64, 1-D); ints[0] = dim. out = in with dim's size = index's size.
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& in = args[1];
    const TensorView& index = args[2];
    const std::int64_t dim = args.ints[0];
    check_indices(index, dim, in.sizes[dim]);
    if (out.numel() == 0) return;
    std::int64_t in_strides[kMaxLoopDims], index_strides[kMaxLoopDims] = {};
    strides_without_dim(in, dim, in_strides);
    index_strides[dim] = index.strides[0];  // index broadcast over every other dim
    const TensorView* base[3] = {&out, &index, &in};
    const std::int64_t* strides[3] = {out.strides, index_strides, in_strides};
    IndexLoop loop(base, out.sizes, out.ndim, strides, dim, false);
    gather_runs<T>(loop, in.strides[dim]);
  }
};

template <typename T> struct GatherKernel {
  // tensors: out, in, index (int64, out's shape); ints[0] = dim. out[..i..] = in[..index[..i..]..]
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& in = args[1];
    const TensorView& index = args[2];
    const std::int64_t dim = args.ints[0];
    check_indices(index, dim, in.sizes[dim]);
    if (out.numel() == 0) return;
    std::int64_t in_strides[kMaxLoopDims];
    strides_without_dim(in, dim, in_strides);
    const TensorView* base[3] = {&out, &index, &in};
    const std::int64_t* strides[3] = {out.strides, index.strides, in_strides};
    IndexLoop loop(base, index.sizes, index.ndim, strides, dim, false);
    gather_runs<T>(loop, in.strides[dim]);
  }
};

template <typename T, bool kAccumulate> struct ScatterKernelImpl {
  // tensors: out (already a copy of self), index, src; ints[0] = dim. Iterates over index's shape:
  // out[..index[..i..]..] = (or +=) src[..i..].
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& index = args[1];
    const TensorView& src = args[2];
    const std::int64_t dim = args.ints[0];
    check_indices(index, dim, out.sizes[dim]);
    if (index.numel() == 0) return;
    std::int64_t out_strides[kMaxLoopDims];
    strides_without_dim(out, dim, out_strides);
    const TensorView* base[3] = {&out, &index, &src};
    const std::int64_t* strides[3] = {out_strides, index.strides, src.strides};
    IndexLoop loop(base, index.sizes, index.ndim, strides, dim, true);
    const std::int64_t step = out.strides[dim] * static_cast<std::int64_t>(sizeof(T));
    loop.run(
        [step](char* const* p, const std::int64_t* s, std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t idx = *reinterpret_cast<const std::int64_t*>(p[1] + i * s[1]);
            T& o = *reinterpret_cast<T*>(p[0] + i * s[0] + idx * step);
            const T v = *reinterpret_cast<const T*>(p[2] + i * s[2]);
            if constexpr (kAccumulate) {
              using C = kernels::compute_t<T>;
              o = kernels::cast_value<T>(static_cast<C>(kernels::cast_value<C>(o) + kernels::cast_value<C>(v)));
            } else {
              o = v;
            }
          }
        },
        true);
  }
};

template <typename T> struct ScatterKernel : ScatterKernelImpl<T, false> {};
template <typename T> struct ScatterAddKernel : ScatterKernelImpl<T, true> {};

}  // namespace

void register_index_kernels(KernelTable& table) { HWARO_INDEX_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
