// RandUniform, RandNormal and RandInt on CUDA: Philox4x32-10, counter-based (kernels/philox.h).
// Element i (row-major) depends only on (seed, offset, i) through kernels/random_values.h, the
// same functions the CPU uses, so a seed gives the same numbers on both (up to the last bit of
// the transcendental functions in normals). One thread per counter: it runs Philox once and
// writes the counter's 2 or 4 elements.
#include <algorithm>
#include <cstdint>

#include "core/kernel_coverage.h"
#include "cuda/kernel_families.h"
#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"
#include "kernels/philox.h"
#include "kernels/random_values.h"

namespace hwaro::cuda {
namespace {

constexpr int kMaxRandomDims = 16;

// Where row-major element i lives in a (possibly strided) output.
struct OutputLayout {
  bool contiguous;
  int ndim;
  std::int64_t sizes[kMaxRandomDims];
  std::int64_t strides[kMaxRandomDims];

  __device__ std::int64_t offset_of(std::int64_t i) const {
    if (contiguous) return i;
    std::int64_t off = 0;
    for (int d = ndim; d-- > 0;) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
};

OutputLayout layout_of(const TensorView& out) {
  HWARO_CHECK(out.ndim <= kMaxRandomDims, "CUDA random kernels support up to ", kMaxRandomDims, " dimensions, got ",
              out.ndim);
  OutputLayout l{out.is_contiguous(), out.ndim, {}, {}};
  for (int d = 0; d < out.ndim; ++d) {
    l.sizes[d] = out.sizes[d];
    l.strides[d] = out.strides[d];
  }
  return l;
}

// value(words, lane) -> T for every element.
template <typename T, typename Value>
__global__ void generate_kernel(T* out, OutputLayout layout, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                                int per_counter, Value value) {
  const std::int64_t counters = (n + per_counter - 1) / per_counter;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < counters; c += step) {
    const kernels::Philox4 words = kernels::philox4x32_10(offset + static_cast<std::uint64_t>(c), seed);
    const std::int64_t first = c * per_counter;
    for (int lane = 0; lane < per_counter && first + lane < n; ++lane) {
      out[layout.offset_of(first + lane)] = value(words, lane);
    }
  }
}

template <typename T, typename Value> void generate(const KernelArgs& args, int per_counter, Value value) {
  const TensorView& out = args[0];
  const std::int64_t n = out.numel();
  if (n == 0) return;
  set_device_of(args);
  const std::int64_t counters = (n + per_counter - 1) / per_counter;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(grid_for(counters), 65536));
  generate_kernel<T><<<blocks, kBlockSize, 0, stream_of(args)>>>(
      out.ptr<T>(), layout_of(out), n, static_cast<std::uint64_t>(args.ints[0]), static_cast<std::uint64_t>(args.ints[1]),
      per_counter, value);
  HWARO_CUDA_CHECK_LAUNCH();
}

template <typename T> struct UniformValue {
  kernels::compute_t<T> low, range;
  __device__ T operator()(const kernels::Philox4& w, int lane) const { return kernels::uniform_element<T>(w, lane, low, range); }
};
template <typename T> struct NormalValue {
  kernels::compute_t<T> mean, std_dev;
  __device__ T operator()(const kernels::Philox4& w, int lane) const { return kernels::normal_element<T>(w, lane, mean, std_dev); }
};
template <typename T> struct IntValue {
  bool wide;
  std::int64_t low;
  std::uint64_t range;
  __device__ T operator()(const kernels::Philox4& w, int lane) const {
    return kernels::randint_element<T>(w, lane, wide, low, range);
  }
};

template <typename T> struct UniformKernel {
  // tensors: out. out ~ U[scalars[0], scalars[1])
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    generate<T>(args, kernels::values_per_counter(kernels::is_wide_float<T>()),
                UniformValue<T>{static_cast<C>(args.scalars[0]), static_cast<C>(args.scalars[1] - args.scalars[0])});
  }
};

template <typename T> struct NormalKernel {
  // tensors: out. out ~ N(scalars[0], scalars[1]^2)
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    generate<T>(args, kernels::values_per_counter(kernels::is_wide_float<T>()),
                NormalValue<T>{static_cast<C>(args.scalars[0]), static_cast<C>(args.scalars[1])});
  }
};

template <typename T> struct RandIntKernel {
  // tensors: out. out ~ integers in [ints[2], ints[3])
  static void run(const KernelArgs& args) {
    const std::int64_t low = args.ints[2];
    const bool wide = kernels::randint_is_wide(low, args.ints[3]);
    generate<T>(args, kernels::values_per_counter(wide),
                IntValue<T>{wide, low, static_cast<std::uint64_t>(args.ints[3]) - static_cast<std::uint64_t>(low)});
  }
};

}  // namespace

void register_random_kernels(KernelTable& table) { HWARO_RANDOM_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
