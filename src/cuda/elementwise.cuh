#pragma once
// launch_elementwise: the CUDA backend's one elementwise kernel template, for every op whose output
// element i depends only on element i of its inputs (copy, fill, unary, binary, where).
//
//   launch_elementwise<Out, In...>(args, f);   tensors: args[0] = out (Out), args[1..] = inputs (In...),
//                                              all of out's shape (broadcast inputs have stride 0)
//   f is a functor with `__device__ Out operator()(In...) const`, copied to the device by value.
//
// Three paths, chosen on the host:
//   all contiguous and 16-byte aligned: each thread moves one 16-byte vector of the widest operand
//     (N = 16 / its size elements per tensor), a grid-stride loop, a scalar tail;
//   otherwise strided: dimensions are coalesced (a contiguous tensor becomes one dimension) and each
//     element's offsets are computed from its linear index by div/mod, in 32-bit arithmetic when the
//     element count and every byte offset fit (integer division is much cheaper), 64-bit otherwise.
#include <cuda/std/tuple>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {

inline constexpr int kMaxElementwiseDims = 16;
// Enough blocks to fill any current GPU many times over; the grid-stride loops cover the rest.
inline constexpr std::int64_t kMaxElementwiseBlocks = 65536;

template <int K> struct Pointers {
  char* p[K];
};

// K tensors over one coalesced iteration shape, innermost dimension first; strides in bytes.
template <int K, typename Index> struct StridedIndexer {
  int ndim = 0;
  Index sizes[kMaxElementwiseDims] = {};
  Index strides[kMaxElementwiseDims][K] = {};

  __device__ void offsets(Index linear, Index (&off)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < kMaxElementwiseDims; ++d) {
      if (d == ndim) break;
      const Index i = linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += i * strides[d][k];
    }
  }
};

// Coalesced shape in 64-bit: sizes and byte strides, innermost first, size-1 dims dropped.
template <int K> struct LoopShape {
  int ndim = 0;
  std::int64_t sizes[kMaxElementwiseDims] = {};
  std::int64_t strides[kMaxElementwiseDims][K] = {};
};

template <int K> LoopShape<K> coalesce(const KernelArgs& args, const int (&elem_size)[K]) {
  const TensorView& first = args[0];
  HWARO_CHECK(first.ndim <= kMaxElementwiseDims, "CUDA elementwise kernels support up to ", kMaxElementwiseDims,
              " dimensions, got a tensor of ", first.ndim, "; reshape it to fewer dimensions first");
  LoopShape<K> s;
  for (int d = first.ndim - 1; d >= 0; --d) {
    if (first.sizes[d] == 1) continue;
    const int i = s.ndim++;
    s.sizes[i] = first.sizes[d];
    for (int k = 0; k < K; ++k) s.strides[i][k] = args[k].strides[d] * elem_size[k];
  }
  // Merge dimension i (outer) into `out` when every tensor steps through both as one.
  int out = 0;
  for (int i = 1; i < s.ndim; ++i) {
    bool mergeable = true;
    for (int k = 0; k < K; ++k) mergeable &= s.strides[i][k] == s.strides[out][k] * s.sizes[out];
    if (mergeable) {
      s.sizes[out] *= s.sizes[i];
    } else {
      ++out;
      s.sizes[out] = s.sizes[i];
      for (int k = 0; k < K; ++k) s.strides[out][k] = s.strides[i][k];
    }
  }
  s.ndim = s.ndim == 0 ? 0 : out + 1;  // 0 dims: a single element at offset 0
  return s;
}

// 32-bit indexing is safe when the count and every tensor's furthest byte offset fit in int32.
template <int K> bool fits_32bit(const LoopShape<K>& s, std::int64_t n) {
  constexpr std::int64_t kLimit = INT32_MAX;
  if (n > kLimit) return false;
  for (int k = 0; k < K; ++k) {
    std::int64_t extent = 0;
    for (int d = 0; d < s.ndim; ++d) {
      if (s.strides[d][k] < 0) return false;
      extent += (s.sizes[d] - 1) * s.strides[d][k];
    }
    if (extent > kLimit) return false;
  }
  return true;
}

template <int K, typename Index> StridedIndexer<K, Index> narrow_indexer(const LoopShape<K>& s) {
  StridedIndexer<K, Index> ix;
  ix.ndim = s.ndim;
  for (int d = 0; d < s.ndim; ++d) {
    ix.sizes[d] = static_cast<Index>(s.sizes[d]);
    for (int k = 0; k < K; ++k) ix.strides[d][k] = static_cast<Index>(s.strides[d][k]);
  }
  return ix;
}

template <typename T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// The per-element work of one op: Out, In... and the functor, with the pack expansions that a
// __global__ template may not hold itself (nvcc allows one trailing pack there).
template <typename F, typename Out, typename... Ins> struct ElementwiseOp {
  static constexpr int K = 1 + sizeof...(Ins);
  static constexpr int kWidest = static_cast<int>(std::max({sizeof(Out), sizeof(Ins)...}));
  static constexpr int N = 16 / kWidest > 0 ? 16 / kWidest : 1;  // elements per 16-byte vector
  F f;

  // Vector v (elements v*N .. v*N+N-1) of contiguous, 16-byte aligned tensors.
  __device__ void vector_at(const Pointers<K>& ptr, std::int64_t v) const {
    vector_at(ptr, v, std::index_sequence_for<Ins...>{});
  }
  template <std::size_t... I>
  __device__ void vector_at(const Pointers<K>& ptr, std::int64_t v, std::index_sequence<I...>) const {
    const ::cuda::std::tuple<Vec<Ins, N>...> in{reinterpret_cast<const Vec<Ins, N>*>(ptr.p[I + 1])[v]...};
    Vec<Out, N> o;
#pragma unroll
    for (int j = 0; j < N; ++j) o.v[j] = f(::cuda::std::get<I>(in).v[j]...);
    reinterpret_cast<Vec<Out, N>*>(ptr.p[0])[v] = o;
  }

  // One element at byte offsets off[k] of each tensor.
  template <typename Index> __device__ void element_at(const Pointers<K>& ptr, const Index (&off)[K]) const {
    element_at(ptr, off, std::index_sequence_for<Ins...>{});
  }
  template <typename Index, std::size_t... I>
  __device__ void element_at(const Pointers<K>& ptr, const Index (&off)[K], std::index_sequence<I...>) const {
    *reinterpret_cast<Out*>(ptr.p[0] + off[0]) = f(*reinterpret_cast<const Ins*>(ptr.p[I + 1] + off[I + 1])...);
  }
  // Element i of contiguous tensors.
  __device__ void contiguous_at(const Pointers<K>& ptr, std::int64_t i) const {
    contiguous_at(ptr, i, std::index_sequence_for<Ins...>{});
  }
  template <std::size_t... I>
  __device__ void contiguous_at(const Pointers<K>& ptr, std::int64_t i, std::index_sequence<I...>) const {
    reinterpret_cast<Out*>(ptr.p[0])[i] = f(reinterpret_cast<const Ins*>(ptr.p[I + 1])[i]...);
  }
};

template <typename Op> __global__ void elementwise_contiguous_kernel(std::int64_t n, Op op, Pointers<Op::K> ptr) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t vectors = n / Op::N;
  for (std::int64_t v = first; v < vectors; v += step) op.vector_at(ptr, v);
  for (std::int64_t i = vectors * Op::N + first; i < n; i += step) op.contiguous_at(ptr, i);
}

template <typename Op, typename Index>
__global__ void elementwise_strided_kernel(Index n, Op op, Pointers<Op::K> ptr, StridedIndexer<Op::K, Index> ix) {
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[Op::K];
    ix.offsets(i, off);
    op.element_at(ptr, off);
  }
}

inline unsigned elementwise_grid(std::int64_t work_items) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(grid_for(work_items), 1, kMaxElementwiseBlocks));
}

template <typename Out, typename... Ins, typename F> void launch_elementwise(const KernelArgs& args, F f) {
  using Op = ElementwiseOp<F, Out, Ins...>;
  constexpr int K = Op::K;
  const std::int64_t n = args[0].numel();
  if (n == 0) return;
  set_device_of(args);
  cudaStream_t stream = stream_of(args);
  Pointers<K> ptr;
  for (int k = 0; k < K; ++k) ptr.p[k] = static_cast<char*>(args[k].data);
  const Op op{f};

  bool vectorisable = true;
  for (int k = 0; k < K; ++k) {
    vectorisable &= args[k].is_contiguous() && reinterpret_cast<std::uintptr_t>(ptr.p[k]) % 16 == 0;
  }
  if (vectorisable) {
    elementwise_contiguous_kernel<Op><<<elementwise_grid((n + Op::N - 1) / Op::N), kBlockSize, 0, stream>>>(n, op, ptr);
    HWARO_CUDA_CHECK_LAUNCH();
    return;
  }
  const int elem_size[K] = {static_cast<int>(sizeof(Out)), static_cast<int>(sizeof(Ins))...};
  const LoopShape<K> shape = coalesce<K>(args, elem_size);
  if (fits_32bit(shape, n)) {
    elementwise_strided_kernel<Op, std::uint32_t><<<elementwise_grid(n), kBlockSize, 0, stream>>>(
        static_cast<std::uint32_t>(n), op, ptr, narrow_indexer<K, std::uint32_t>(shape));
  } else {
    elementwise_strided_kernel<Op, std::int64_t><<<elementwise_grid(n), kBlockSize, 0, stream>>>(
        n, op, ptr, narrow_indexer<K, std::int64_t>(shape));
  }
  HWARO_CUDA_CHECK_LAUNCH();
}

}  // namespace hwaro::cuda
