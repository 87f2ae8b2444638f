// Sum, Prod, All, Any, Max and Min on CUDA. Every kernel sees its input as a contiguous
// [outer, R, inner] block (ints = outer, R, inner) and writes a contiguous [outer, inner] output.
// The combine steps are kernels/reduce_ops.h, shared with the CPU.
//
// One kernel does all shapes: a block covers bx adjacent output columns (bx = inner rounded up to
// a power of two, at most 32; 1 for a last-dim reduction) and its by = 256 / bx thread rows stride
// along R, so neighbouring threads read neighbouring elements either way; warp shuffles and shared
// memory combine the rows (reduce_block.cuh). When the outputs alone cannot fill the GPU and R is
// long, R is cut into chunks over blockIdx.y, each writes a partial accumulator, and a second pass
// (the same kernel, over [outputs, chunks]) folds them.
#include <algorithm>
#include <cstdint>

#include "core/backend_registry.h"
#include "core/kernel_coverage.h"
#include "cuda/kernel_families.h"
#include "cuda/kernel_launch.h"
#include "cuda/reduce_block.cuh"
#include "hwaro/errors.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace hwaro::cuda {
namespace {

struct Shape {
  std::int64_t outer, r, inner;
};

// Pass layout: chunk_len rows of R per block row of the grid, chunks = gridDim.y.
template <typename Combine, typename Acc, typename In, typename Load, typename Store>
__global__ void reduce_kernel(const In* in, Shape s, std::int64_t chunk_len, Load load, Store store) {
  const std::int64_t bx = blockDim.x;
  const std::int64_t tiles = (s.inner + bx - 1) / bx;
  const std::int64_t o = blockIdx.x / tiles;
  const std::int64_t j = (blockIdx.x % tiles) * bx + threadIdx.x;
  const std::int64_t chunk = blockIdx.y;
  const std::int64_t r0 = chunk * chunk_len;
  const std::int64_t r1 = r0 + chunk_len < s.r ? r0 + chunk_len : s.r;
  Acc acc = Combine::template identity<Acc>();
  if (j < s.inner) {
    const In* base = in + o * s.r * s.inner + j;
    for (std::int64_t r = r0 + threadIdx.y; r < r1; r += blockDim.y) acc = Combine::combine(acc, load(base[r * s.inner], r));
  }
  acc = block_reduce_columns<Combine>(acc);
  if (threadIdx.y == 0 && j < s.inner) store(o * s.inner + j, chunk, acc);
}

// ---- loads and stores ----
template <typename Acc> struct CastLoad {
  template <typename In> __device__ Acc operator()(In x, std::int64_t) const { return kernels::cast_value<Acc>(x); }
};
template <typename C> struct IndexedLoad {
  template <typename In> __device__ kernels::ValueIndex<C> operator()(In x, std::int64_t r) const {
    return {static_cast<C>(x), r};
  }
};
struct PassThroughLoad {  // the second pass reads accumulators
  template <typename Acc> __device__ Acc operator()(Acc x, std::int64_t) const { return x; }
};
template <typename Acc> struct PartialStore {  // partial[output * chunks + chunk]
  Acc* partial;
  std::int64_t chunks;
  __device__ void operator()(std::int64_t i, std::int64_t chunk, Acc acc) const { partial[i * chunks + chunk] = acc; }
};
template <typename Out> struct CastStore {
  Out* out;
  template <typename Acc> __device__ void operator()(std::int64_t i, std::int64_t, Acc acc) const {
    out[i] = kernels::cast_value<Out>(acc);
  }
};
template <typename T> struct ValueIndexStore {
  T* values;
  std::int64_t* indices;
  template <typename V> __device__ void operator()(std::int64_t i, std::int64_t, V v) const {
    values[i] = kernels::cast_value<T>(v.value);
    indices[i] = v.index;
  }
};

// ---- launch geometry ----
inline constexpr std::int64_t kTargetBlocks = 1024;  // enough to fill the largest GPUs several times
inline constexpr std::int64_t kMaxChunks = 1024;
inline constexpr std::int64_t kMinRowsPerThread = 16;  // below this a chunk is not worth its partial

struct Geometry {
  dim3 block;
  std::int64_t tiles;   // blocks along the outputs: outer * ceil(inner / bx)
  std::int64_t chunks;  // blocks along R
  std::int64_t chunk_len;
};

Geometry geometry_for(Shape s) {
  unsigned bx = 1;
  while (bx < 32 && bx < s.inner) bx *= 2;
  const unsigned by = kReduceThreads / bx;
  Geometry g{dim3(bx, by), s.outer * ((s.inner + bx - 1) / bx), 1, std::max<std::int64_t>(s.r, 1)};
  const std::int64_t max_useful = s.r / (static_cast<std::int64_t>(by) * kMinRowsPerThread);
  const std::int64_t wanted = (kTargetBlocks + g.tiles - 1) / g.tiles;
  const std::int64_t chunks = std::min({wanted, max_useful, kMaxChunks});
  if (chunks > 1) {
    g.chunk_len = (s.r + chunks - 1) / chunks;
    g.chunks = (s.r + g.chunk_len - 1) / g.chunk_len;
  }
  return g;
}

// Runs the reduction of `in` (In, shape s) into store, with a second pass when R is chunked.
template <typename Combine, typename Acc, typename In, typename Load, typename Store>
void run_reduction(const KernelArgs& args, const In* in, Shape s, Load load, Store store) {
  if (s.outer * s.inner == 0) return;
  HWARO_CHECK(s.outer * s.inner <= INT32_MAX, "CUDA reductions support up to 2^31 outputs, got ", s.outer * s.inner);
  set_device_of(args);
  cudaStream_t stream = stream_of(args);
  const Geometry g = geometry_for(s);
  if (g.chunks == 1) {
    reduce_kernel<Combine, Acc><<<dim3(static_cast<unsigned>(g.tiles)), g.block, 0, stream>>>(in, s, g.chunk_len,
                                                                                             load, store);
    HWARO_CUDA_CHECK_LAUNCH();
    return;
  }
  // The partials live in the caching allocator; freeing them right after the launches is safe
  // because blocks are reused in the order of this (the current) stream.
  const std::int64_t outputs = s.outer * s.inner;
  const int device = args[0].device.index();
  DataPtr workspace = detail::backend(DeviceType::CUDA).allocator(device).allocate(
      static_cast<std::size_t>(outputs * g.chunks) * sizeof(Acc));
  Acc* partial = static_cast<Acc*>(workspace.get());
  reduce_kernel<Combine, Acc><<<dim3(static_cast<unsigned>(g.tiles), static_cast<unsigned>(g.chunks)), g.block, 0,
                                stream>>>(in, s, g.chunk_len, load, PartialStore<Acc>{partial, g.chunks});
  HWARO_CUDA_CHECK_LAUNCH();
  const Shape second{outputs, g.chunks, 1};
  reduce_kernel<Combine, Acc><<<dim3(static_cast<unsigned>(outputs)), dim3(1, kReduceThreads), 0, stream>>>(
      partial, second, g.chunks, PassThroughLoad{}, store);
  HWARO_CUDA_CHECK_LAUNCH();
}

Shape shape_of(const KernelArgs& args) { return {args.ints[0], args.ints[1], args.ints[2]}; }

// tensors: out (sum_out_t<T>), in (T)
template <typename Op> struct ArithmeticReduce {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      using Acc = kernels::sum_acc_t<T>;
      using Out = kernels::sum_out_t<T>;
      run_reduction<Op, Acc>(args, args[1].ptr<const T>(), shape_of(args), CastLoad<Acc>{},
                             CastStore<Out>{args[0].ptr<Out>()});
    }
  };
};

// tensors: out (bool), in (T)
template <typename Op> struct LogicalReduce {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      run_reduction<Op, bool>(args, args[1].ptr<const T>(), shape_of(args), CastLoad<bool>{},
                              CastStore<bool>{args[0].ptr<bool>()});
    }
  };
};

// tensors: out values (T), out indices (int64), in (T). Values compared in compute_t<T>; the first
// index of the extremum (and of the first NaN) wins, as on the CPU.
template <typename Op> struct ExtremumReduce {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      using C = kernels::compute_t<T>;
      const Shape s = shape_of(args);
      HWARO_ASSERT(s.r > 0 || s.outer * s.inner == 0, "max/min over an empty dimension must be rejected by the op");
      run_reduction<OrderFreeExtremum<Op>, kernels::ValueIndex<C>>(
          args, args[2].ptr<const T>(), s, IndexedLoad<C>{},
          ValueIndexStore<T>{args[0].ptr<T>(), args[1].ptr<std::int64_t>()});
    }
  };
};

}  // namespace

void register_reduction_kernels(KernelTable& table) { HWARO_REDUCTION_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
