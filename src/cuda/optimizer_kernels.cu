// AdamStep and SgdStep on the GPU: every parameter of a group in one launch (multi_tensor_apply),
// instead of a launch per parameter, or about ten per parameter for the composite form. The
// element rule is kernels/optimizer_math.h, the same code the CPU runs.
#include "core/kernel_coverage.h"
#include "cuda/kernel_families.h"
#include "cuda/multi_tensor_apply.cuh"
#include "kernels/optimizer_math.h"

namespace hwaro::cuda {
namespace {

template <typename T> struct AdamElement {
  T group[5];  // beta1, beta2, eps, l2, param_scale
  bool maximize;

  __device__ void operator()(const TupleBatch<T>& batch, int item, std::int64_t i) const {
    T* const* d = batch.data[item];
    const kernels::AdamScalars<T> s = kernels::adam_scalars<T>(group, maximize, batch.scalars[item]);
    T p = d[0][i], m = d[2][i], v = d[3][i];
    kernels::adam_update<T>(p, d[1][i], m, v, d[4] != nullptr ? d[4] + i : nullptr, s);
    d[0][i] = p;
    d[2][i] = m;
    d[3][i] = v;
  }
};

template <typename T> struct SgdElement {
  T group[4];  // lr, momentum, dampening, weight_decay
  bool nesterov, maximize;

  __device__ void operator()(const TupleBatch<T>& batch, int item, std::int64_t i) const {
    T* const* d = batch.data[item];
    const kernels::SgdScalars<T> s =
        kernels::sgd_scalars<T>(group, nesterov, maximize, batch.scalars[item], d[2] != nullptr);
    T p = d[0][i];
    kernels::sgd_update<T>(p, d[1][i], d[2] != nullptr ? d[2] + i : nullptr, s);
    d[0][i] = p;
  }
};

template <typename T> struct AdamStepKernel {
  static void run(const KernelArgs& args) {
    AdamElement<T> f{};
    for (int k = 0; k < 5; ++k) f.group[k] = static_cast<T>(args.scalars[k]);
    f.maximize = args.ints[0] != 0;
    multi_tensor_apply<T>(args, f);
  }
};

template <typename T> struct SgdStepKernel {
  static void run(const KernelArgs& args) {
    SgdElement<T> f{};
    for (int k = 0; k < 4; ++k) f.group[k] = static_cast<T>(args.scalars[k]);
    f.nesterov = args.ints[0] != 0;
    f.maximize = args.ints[1] != 0;
    multi_tensor_apply<T>(args, f);
  }
};

}  // namespace

void register_optimizer_kernels(KernelTable& table) { HWARO_OPTIMIZER_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
