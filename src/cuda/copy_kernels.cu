// Copy (with dtype conversion), Fill and Arange on CUDA. Copy and Fill go through the one
// elementwise kernel (elementwise.cuh); same-dtype contiguous copies are a cudaMemcpyAsync.
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "core/kernel_coverage.h"
#include "cuda/elementwise.cuh"
#include "cuda/kernel_families.h"
#include "kernels/cast.h"

namespace hwaro::cuda {
namespace {

template <typename Out, typename In> struct CastFn {
  __device__ Out operator()(In x) const { return kernels::cast_value<Out>(x); }
};

template <typename Out> struct CopyKernel {
  // tensors: out, in (any dtype, broadcast to out's shape)
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& in = args[1];
    if (in.dtype == out.dtype && in.is_contiguous() && out.is_contiguous()) {
      if (out.numel() == 0) return;
      set_device_of(args);
      HWARO_CUDA_CHECK(cudaMemcpyAsync(out.data, in.data, static_cast<std::size_t>(out.numel()) * sizeof(Out),
                                       cudaMemcpyDeviceToDevice, stream_of(args)));
      return;
    }
    visit_dtype(in.dtype, [&]<typename In>() { launch_elementwise<Out, In>(args, CastFn<Out, In>{}); });
  }
};

template <typename T> struct ConstantFn {
  T value;
  __device__ T operator()() const { return value; }
};

// The fill value: integral dtypes take ints[0] (exact beyond 2^53), the rest scalars[0].
template <typename T> T scalar_arg(const KernelArgs& args, int i) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(args.ints[i]);
  } else {
    return kernels::cast_value<T>(args.scalars[i]);
  }
}

template <typename T> struct FillKernel {
  // tensors: out
  static void run(const KernelArgs& args) { launch_elementwise<T>(args, ConstantFn<T>{scalar_arg<T>(args, 0)}); }
};

// out[i] = start + i * step: integers in int64 (exact), floats in double, as the CPU kernel.
template <typename T, typename Step> __global__ void arange_kernel(T* out, std::int64_t n, Step start, Step step) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(start + i * step);
    } else {
      out[i] = kernels::cast_value<T>(start + static_cast<double>(i) * step);
    }
  }
}

template <typename T> struct ArangeKernel {
  // tensors: out (contiguous)
  static void run(const KernelArgs& args) {
    const std::int64_t n = args[0].numel();
    if (n == 0) return;
    set_device_of(args);
    if constexpr (std::is_integral_v<T>) {
      arange_kernel<T, std::int64_t><<<elementwise_grid(n), kBlockSize, 0, stream_of(args)>>>(
          args[0].ptr<T>(), n, args.ints[0], args.ints[1]);
    } else {
      arange_kernel<T, double><<<elementwise_grid(n), kBlockSize, 0, stream_of(args)>>>(args[0].ptr<T>(), n,
                                                                                        args.scalars[0], args.scalars[1]);
    }
    HWARO_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void register_copy_kernels(KernelTable& table) { HWARO_COPY_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
