// AdamStep and SgdStep on the CPU: one pass over a parameter and its state, split over the thread
// pool, instead of the eight or so elementwise ops (each a pass over memory) of the composite form.
#include "cpu/kernel_families.h"
#include "cpu/thread_pool.h"
#include "kernels/optimizer_math.h"

namespace hwaro::cpu {
namespace {

template <typename T> struct AdamStepKernel {
  static void run(const KernelArgs& args) {
    T* p = args[0].ptr<T>();
    const T* g = args[1].ptr<const T>();
    T* m = args[2].ptr<T>();
    T* v = args[3].ptr<T>();
    T* v_max = args.num_tensors > 4 ? args[4].ptr<T>() : nullptr;
    const double* k = args.scalars;
    const kernels::AdamScalars<T> s{T(k[0]), T(k[1]), T(k[2]), T(k[3]), T(k[4]), T(k[5]), T(k[6])};
    parallel_for(0, args[0].numel(), kElementwiseGrain / 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        kernels::adam_update<T>(p[i], g[i], m[i], v[i], v_max != nullptr ? v_max + i : nullptr, s);
      }
    });
  }
};

template <typename T> struct SgdStepKernel {
  static void run(const KernelArgs& args) {
    T* p = args[0].ptr<T>();
    const T* g = args[1].ptr<const T>();
    T* buf = args.num_tensors > 2 ? args[2].ptr<T>() : nullptr;
    const double* k = args.scalars;
    const kernels::SgdScalars<T> s{T(k[0]), T(k[1]), T(k[2]), T(k[3]), buf != nullptr, args.ints[0] != 0,
                                   args.ints[1] != 0};
    parallel_for(0, args[0].numel(), kElementwiseGrain / 2, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) kernels::sgd_update<T>(p[i], g[i], buf != nullptr ? buf + i : nullptr, s);
    });
  }
};

}  // namespace

void register_optimizer_kernels(KernelTable& table) {
  table.set_types<AdamStepKernel, float, double>(OpId::AdamStep);
  table.set_types<SgdStepKernel, float, double>(OpId::SgdStep);
}

}  // namespace hwaro::cpu
