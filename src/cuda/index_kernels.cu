// IndexSelect, Gather, Scatter and ScatterAdd on CUDA.
//
// As on the CPU, all four are one walk over an iteration shape with three views (out, index,
// data): the indexed tensor is seen with stride 0 along `dim`, and each element adds
// index * (its real stride along dim) to its offset. The offsets come from elementwise.cuh's
// coalesced StridedIndexer. Indices are validated first by a kernel that records any value out
// of range; the host reads that flag (a synchronisation) and throws IndexError before the main
// kernel runs, so a bad index is a clear error, never an out-of-bounds access.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/backend_registry.h"
#include "core/kernel_coverage.h"
#include "cuda/elementwise.cuh"
#include "cuda/kernel_families.h"
#include "kernels/cast.h"

namespace hwaro::cuda {
namespace {

struct BadIndex {
  unsigned long long found;  // 0 or 1
  long long value;           // one offending value
};

__global__ void check_indices_kernel(const char* index, std::int64_t n, StridedIndexer<1, std::int64_t> ix,
                                     std::int64_t bound, BadIndex* bad) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    std::int64_t off[1];
    ix.offsets(i, off);
    const std::int64_t v = *reinterpret_cast<const std::int64_t*>(index + off[0]);
    if (v < 0 || v >= bound) {
      if (atomicExch(&bad->found, 1ull) == 0ull) bad->value = v;
    }
  }
}

// Throws IndexError when an element of `index` (int64, any strides) is outside [0, bound).
void check_indices(const KernelArgs& args, const TensorView& index, std::int64_t dim, std::int64_t bound) {
  const std::int64_t n = index.numel();
  if (n == 0) return;
  KernelArgs one;
  one.tensors[0] = index;
  one.num_tensors = 1;
  const int elem_size[1] = {static_cast<int>(sizeof(std::int64_t))};
  const LoopShape<1> shape = coalesce<1>(one, elem_size);
  cudaStream_t stream = stream_of(args);
  DataPtr flag = detail::backend(DeviceType::CUDA).allocator(args[0].device.index()).allocate(sizeof(BadIndex));
  auto* bad = static_cast<BadIndex*>(flag.get());
  HWARO_CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof(BadIndex), stream));
  check_indices_kernel<<<elementwise_grid(n), kBlockSize, 0, stream>>>(
      static_cast<const char*>(index.data), n, narrow_indexer<1, std::int64_t>(shape), bound, bad);
  HWARO_CUDA_CHECK_LAUNCH();
  BadIndex host{};
  HWARO_CUDA_CHECK(cudaMemcpyAsync(&host, bad, sizeof(BadIndex), cudaMemcpyDeviceToHost, stream));
  HWARO_CUDA_CHECK(cudaStreamSynchronize(stream));
  HWARO_CHECK_AS(IndexError, host.found == 0, "index ", host.value, " is out of bounds for dimension ", dim,
                 " with size ", bound);
}

// dst += v for the element types of ScatterAdd. 1- and 2-byte types (uint8, the 16-bit floats)
// have no native atomic add here, so they update their aligned 32-bit word by compare-and-swap,
// adding in compute_t as the CPU does.
template <typename T> __device__ void atomic_add(T* dst, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t>) {
    atomicAdd(dst, v);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {  // two's complement: unsigned wrap-around is the same sum
    atomicAdd(reinterpret_cast<unsigned long long*>(dst), static_cast<unsigned long long>(v));
  } else {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "atomic_add: unexpected element size");
    using C = kernels::compute_t<T>;
    using Bits = std::conditional_t<sizeof(T) == 1, std::uint8_t, std::uint16_t>;
    const auto address = reinterpret_cast<std::uintptr_t>(dst);
    auto* word = reinterpret_cast<unsigned*>(address & ~std::uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(address & 3u) * 8u;
    const unsigned mask = ((1u << (8 * sizeof(T))) - 1u) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      const Bits current_bits = static_cast<Bits>((assumed & mask) >> shift);
      T current;
      std::memcpy(&current, &current_bits, sizeof(T));
      const T sum = kernels::cast_value<T>(static_cast<C>(kernels::cast_value<C>(current) + kernels::cast_value<C>(v)));
      Bits sum_bits;
      std::memcpy(&sum_bits, &sum, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned>(sum_bits) << shift));
    } while (assumed != old);
  }
}

enum class Mode { Gather, Scatter, ScatterAdd };

// Views (out, index, data) over the iteration shape; step: data's (gather) or out's (scatter)
// byte stride along dim, which each index value multiplies.
template <typename T, Mode kMode>
__global__ void index_kernel(std::int64_t n, Pointers<3> p, StridedIndexer<3, std::int64_t> ix, std::int64_t step) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    std::int64_t off[3];
    ix.offsets(i, off);
    const std::int64_t idx = *reinterpret_cast<const std::int64_t*>(p.p[1] + off[1]);
    if constexpr (kMode == Mode::Gather) {
      *reinterpret_cast<T*>(p.p[0] + off[0]) = *reinterpret_cast<const T*>(p.p[2] + off[2] + idx * step);
    } else if constexpr (kMode == Mode::Scatter) {
      *reinterpret_cast<T*>(p.p[0] + off[0] + idx * step) = *reinterpret_cast<const T*>(p.p[2] + off[2]);
    } else {
      atomic_add(reinterpret_cast<T*>(p.p[0] + off[0] + idx * step), *reinterpret_cast<const T*>(p.p[2] + off[2]));
    }
  }
}

// Runs index_kernel over `sizes` (ndim dims) with views (out, index, data) of the given element strides.
template <typename T, Mode kMode>
void run_index(const KernelArgs& args, const TensorView* const views[3], const std::int64_t* sizes, int ndim,
               const std::int64_t* const strides[3], std::int64_t step_elements) {
  KernelArgs walk;
  for (int k = 0; k < 3; ++k) {
    walk.tensors[k] = *views[k];
    walk.tensors[k].ndim = ndim;
    walk.tensors[k].sizes = sizes;
    walk.tensors[k].strides = strides[k];
  }
  walk.num_tensors = 3;
  const std::int64_t n = walk.tensors[0].numel();
  if (n == 0) return;
  const int elem_size[3] = {static_cast<int>(sizeof(T)), static_cast<int>(sizeof(std::int64_t)),
                            static_cast<int>(sizeof(T))};
  const LoopShape<3> shape = coalesce<3>(walk, elem_size);
  Pointers<3> p;
  for (int k = 0; k < 3; ++k) p.p[k] = static_cast<char*>(views[k]->data);
  index_kernel<T, kMode><<<elementwise_grid(n), kBlockSize, 0, stream_of(args)>>>(
      n, p, narrow_indexer<3, std::int64_t>(shape), step_elements * static_cast<std::int64_t>(sizeof(T)));
  HWARO_CUDA_CHECK_LAUNCH();
}

// The element strides of t with its stride along dim replaced by 0.
void strides_without_dim(const TensorView& t, std::int64_t dim, std::int64_t* out) {
  HWARO_CHECK(t.ndim <= kMaxElementwiseDims, "CUDA indexing kernels support up to ", kMaxElementwiseDims,
              " dimensions, got ", t.ndim);
  for (int d = 0; d < t.ndim; ++d) out[d] = d == dim ? 0 : t.strides[d];
}

template <typename T> struct IndexSelectKernel {
  // tensors: out, in, index (int64, 1-D); ints[0] = dim. out = in with dim's size = index's size.
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& in = args[1];
    const TensorView& index = args[2];
    const std::int64_t dim = args.ints[0];
    set_device_of(args);
    check_indices(args, index, dim, in.sizes[dim]);
    std::int64_t in_strides[kMaxElementwiseDims], index_strides[kMaxElementwiseDims] = {};
    strides_without_dim(in, dim, in_strides);
    index_strides[dim] = index.strides[0];  // index broadcast over every other dim
    const TensorView* views[3] = {&out, &index, &in};
    const std::int64_t* strides[3] = {out.strides, index_strides, in_strides};
    run_index<T, Mode::Gather>(args, views, out.sizes, out.ndim, strides, in.strides[dim]);
  }
};

template <typename T> struct GatherKernel {
  // tensors: out, in, index (int64, out's shape); ints[0] = dim. out[..i..] = in[..index[..i..]..]
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& in = args[1];
    const TensorView& index = args[2];
    const std::int64_t dim = args.ints[0];
    set_device_of(args);
    check_indices(args, index, dim, in.sizes[dim]);
    std::int64_t in_strides[kMaxElementwiseDims];
    strides_without_dim(in, dim, in_strides);
    const TensorView* views[3] = {&out, &index, &in};
    const std::int64_t* strides[3] = {out.strides, index.strides, in_strides};
    run_index<T, Mode::Gather>(args, views, index.sizes, index.ndim, strides, in.strides[dim]);
  }
};

template <typename T, Mode kMode> struct ScatterKernelImpl {
  // tensors: out (already a copy of self), index, src; ints[0] = dim. Iterates over index's shape:
  // out[..index[..i..]..] = (or +=) src[..i..]. With repeated indices Scatter keeps one of the
  // writes (which one is unspecified, as in PyTorch on CUDA); ScatterAdd adds them all.
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& index = args[1];
    const TensorView& src = args[2];
    const std::int64_t dim = args.ints[0];
    set_device_of(args);
    check_indices(args, index, dim, out.sizes[dim]);
    std::int64_t out_strides[kMaxElementwiseDims];
    strides_without_dim(out, dim, out_strides);
    const TensorView* views[3] = {&out, &index, &src};
    const std::int64_t* strides[3] = {out_strides, index.strides, src.strides};
    run_index<T, kMode>(args, views, index.sizes, index.ndim, strides, out.strides[dim]);
  }
};

template <typename T> struct ScatterKernel : ScatterKernelImpl<T, Mode::Scatter> {};
template <typename T> struct ScatterAddKernel : ScatterKernelImpl<T, Mode::ScatterAdd> {};

}  // namespace

void register_index_kernels(KernelTable& table) { HWARO_INDEX_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
