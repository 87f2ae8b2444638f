// AdamStep and SgdStep on the GPU: one kernel launch per parameter, on the op's stream, instead of
// a launch per elementwise op of the composite form. The element rule is kernels/optimizer_math.h,
// the same code the CPU runs.
#include "cuda/kernel_families.h"
#include "cuda/kernel_launch.h"
#include "kernels/optimizer_math.h"

namespace hwaro::cuda {
namespace {

template <typename T>
__global__ void adam_step_kernel(T* p, const T* g, T* m, T* v, T* v_max, std::int64_t n, kernels::AdamScalars<T> s) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    T pi = p[i], mi = m[i], vi = v[i];
    kernels::adam_update<T>(pi, g[i], mi, vi, v_max != nullptr ? v_max + i : nullptr, s);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

template <typename T>
__global__ void sgd_step_kernel(T* p, const T* g, T* buf, std::int64_t n, kernels::SgdScalars<T> s) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    T pi = p[i];
    kernels::sgd_update<T>(pi, g[i], buf != nullptr ? buf + i : nullptr, s);
    p[i] = pi;
  }
}

template <typename T> struct AdamStepKernel {
  static void run(const KernelArgs& args) {
    const std::int64_t n = args[0].numel();
    if (n == 0) return;
    set_device_of(args);
    const double* k = args.scalars;
    const kernels::AdamScalars<T> s{T(k[0]), T(k[1]), T(k[2]), T(k[3]), T(k[4]), T(k[5]), T(k[6])};
    T* v_max = args.num_tensors > 4 ? args[4].ptr<T>() : nullptr;
    adam_step_kernel<T><<<grid_for(n), kBlockSize, 0, stream_of(args)>>>(
        args[0].ptr<T>(), args[1].ptr<const T>(), args[2].ptr<T>(), args[3].ptr<T>(), v_max, n, s);
    HWARO_CUDA_CHECK_LAUNCH();
  }
};

template <typename T> struct SgdStepKernel {
  static void run(const KernelArgs& args) {
    const std::int64_t n = args[0].numel();
    if (n == 0) return;
    set_device_of(args);
    T* buf = args.num_tensors > 2 ? args[2].ptr<T>() : nullptr;
    const double* k = args.scalars;
    const kernels::SgdScalars<T> s{T(k[0]), T(k[1]), T(k[2]), T(k[3]), buf != nullptr, args.ints[0] != 0,
                                   args.ints[1] != 0};
    sgd_step_kernel<T><<<grid_for(n), kBlockSize, 0, stream_of(args)>>>(args[0].ptr<T>(), args[1].ptr<const T>(),
                                                                         buf, n, s);
    HWARO_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void register_optimizer_kernels(KernelTable& table) {
  table.set_types<AdamStepKernel, float, double>(OpId::AdamStep);
  table.set_types<SgdStepKernel, float, double>(OpId::SgdStep);
}

}  // namespace hwaro::cuda
