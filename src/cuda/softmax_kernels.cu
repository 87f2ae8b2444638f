// Softmax and LogSoftmax on CUDA: out [outer, R, inner], in [outer, R, inner], both contiguous,
// ints = outer, R, inner. Numerically stable: each slice has its maximum subtracted before exp,
// computed in compute_t<T> (float for the 16-bit floats), as on the CPU.
//
// Last-dim slices (inner == 1) are rows: one warp per row up to kWarpRowMax elements, one block per
// row beyond, each making three passes over its row (max, sum of exp, write), with shuffles
// broadcasting the maximum and the sum. Other slices are columns: one thread per (outer, inner)
// column, neighbouring threads reading neighbouring elements.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/kernel_coverage.h"
#include "cuda/kernel_families.h"
#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"
#include "kernels/cast.h"

namespace hwaro::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr std::int64_t kWarpRowMax = 1024;

// The maximum skips NaNs (a NaN is never greater), as the CPU's; exp then propagates them.
template <typename C> __device__ C larger(C a, C b) { return b > a ? b : a; }
struct MaxOp {
  template <typename C> __device__ C operator()(C a, C b) const { return larger(a, b); }
};
struct SumOp {
  template <typename C> __device__ C operator()(C a, C b) const { return a + b; }
};

// Every lane of the warp gets the combination of all lanes' values.
template <typename C, typename F> __device__ C warp_all_reduce(C v, F f) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = f(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of the block gets the combination of all threads' values.
template <typename C, typename F> __device__ C block_all_reduce(C v, F f) {
  __shared__ C warp_values[kThreads / kWarp];
  __shared__ C result;
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  v = warp_all_reduce(v, f);
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    C total = warp_values[0];
    for (int w = 1; w < static_cast<int>(blockDim.x) / kWarp; ++w) total = f(total, warp_values[w]);
    result = total;
  }
  __syncthreads();
  return result;
}

template <bool kLog, typename C> __device__ C softmax_value(C x, C m, C sum_or_log_sum) {
  if constexpr (kLog) {
    return (x - m) - sum_or_log_sum;  // (x - m) is exact near the maximum
  } else {
    return std::exp(x - m) / sum_or_log_sum;
  }
}

// One row per warp (kWholeBlock false) or per block (true); lanes stride the row.
template <bool kLog, bool kWholeBlock, typename T>
__global__ void softmax_rows_kernel(T* out, const T* in, std::int64_t rows, std::int64_t r) {
  using C = kernels::compute_t<T>;
  const std::int64_t row = kWholeBlock ? blockIdx.x
                                       : static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  if (!kWholeBlock && row >= rows) return;  // whole warps leave together, so the shuffles stay full
  const int lane = kWholeBlock ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x) % kWarp;
  const int step = kWholeBlock ? static_cast<int>(blockDim.x) : kWarp;
  const T* x = in + row * r;
  T* y = out + row * r;
  auto reduce = [](C v, auto f) {
    if constexpr (kWholeBlock) {
      return block_all_reduce(v, f);
    } else {
      return warp_all_reduce(v, f);
    }
  };

  C m = -std::numeric_limits<C>::infinity();
  for (std::int64_t i = lane; i < r; i += step) m = larger(m, static_cast<C>(x[i]));
  m = reduce(m, MaxOp{});
  C sum = 0;
  for (std::int64_t i = lane; i < r; i += step) sum += std::exp(static_cast<C>(x[i]) - m);
  sum = reduce(sum, SumOp{});
  const C denominator = kLog ? std::log(sum) : sum;
  for (std::int64_t i = lane; i < r; i += step) y[i] = kernels::cast_value<T>(softmax_value<kLog>(static_cast<C>(x[i]), m, denominator));
}

// One thread per column (o, j) of a [outer, R, inner] block.
template <bool kLog, typename T>
__global__ void softmax_columns_kernel(T* out, const T* in, std::int64_t outer, std::int64_t r, std::int64_t inner) {
  using C = kernels::compute_t<T>;
  const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (column >= outer * inner) return;
  const std::int64_t o = column / inner, j = column % inner;
  const T* x = in + o * r * inner + j;
  T* y = out + o * r * inner + j;
  C m = -std::numeric_limits<C>::infinity();
  for (std::int64_t k = 0; k < r; ++k) m = larger(m, static_cast<C>(x[k * inner]));
  C sum = 0;
  for (std::int64_t k = 0; k < r; ++k) sum += std::exp(static_cast<C>(x[k * inner]) - m);
  const C denominator = kLog ? std::log(sum) : sum;
  for (std::int64_t k = 0; k < r; ++k) {
    y[k * inner] = kernels::cast_value<T>(softmax_value<kLog>(static_cast<C>(x[k * inner]), m, denominator));
  }
}

template <bool kLog> struct SoftmaxFamily {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      T* out = args[0].ptr<T>();
      const T* in = args[1].ptr<const T>();
      const std::int64_t outer = args.ints[0], r = args.ints[1], inner = args.ints[2];
      if (outer * r * inner == 0) return;
      HWARO_CHECK(outer * inner <= INT32_MAX, "CUDA softmax supports up to 2^31 slices, got ", outer * inner);
      set_device_of(args);
      cudaStream_t stream = stream_of(args);
      if (inner == 1 && r <= kWarpRowMax) {
        const std::int64_t rows_per_block = kThreads / kWarp;
        const auto blocks = static_cast<unsigned>((outer + rows_per_block - 1) / rows_per_block);
        softmax_rows_kernel<kLog, false><<<blocks, kThreads, 0, stream>>>(out, in, outer, r);
      } else if (inner == 1) {
        softmax_rows_kernel<kLog, true><<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(out, in, outer, r);
      } else {
        softmax_columns_kernel<kLog><<<grid_for(outer * inner), kBlockSize, 0, stream>>>(out, in, outer, r, inner);
      }
      HWARO_CUDA_CHECK_LAUNCH();
    }
  };
};

}  // namespace

void register_softmax_kernels(KernelTable& table) { HWARO_SOFTMAX_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
