// AdamStep and SgdStep on the CPU: one pass over each parameter and its state, split over the
// thread pool, instead of the eight or so elementwise ops (each a pass over memory) of the
// composite form. The launch carries every parameter of a group (KernelArgs::tuples).
#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/thread_pool.h"
#include "kernels/optimizer_math.h"

namespace hwaro::cpu {
namespace {

template <typename T> struct AdamStepKernel {
  static void run(const KernelArgs& args) {
    for (std::int64_t item = 0; item < args.num_tuples; ++item) {
      const TensorTuple& t = args.tuples[item];
      T* p = static_cast<T*>(t.data[0]);
      const T* g = static_cast<const T*>(t.data[1]);
      T* m = static_cast<T*>(t.data[2]);
      T* v = static_cast<T*>(t.data[3]);
      T* v_max = static_cast<T*>(t.data[4]);
      const kernels::AdamScalars<T> s = kernels::adam_scalars<T>(args.scalars, args.ints[0] != 0, t.scalars);
      parallel_for(0, t.numel, kElementwiseGrain / 4, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          kernels::adam_update<T>(p[i], g[i], m[i], v[i], v_max != nullptr ? v_max + i : nullptr, s);
        }
      });
    }
  }
};

template <typename T> struct SgdStepKernel {
  static void run(const KernelArgs& args) {
    for (std::int64_t item = 0; item < args.num_tuples; ++item) {
      const TensorTuple& t = args.tuples[item];
      T* p = static_cast<T*>(t.data[0]);
      const T* g = static_cast<const T*>(t.data[1]);
      T* buf = static_cast<T*>(t.data[2]);
      const kernels::SgdScalars<T> s =
          kernels::sgd_scalars<T>(args.scalars, args.ints[0] != 0, args.ints[1] != 0, t.scalars, buf != nullptr);
      parallel_for(0, t.numel, kElementwiseGrain / 2, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) kernels::sgd_update<T>(p[i], g[i], buf != nullptr ? buf + i : nullptr, s);
      });
    }
  }
};

}  // namespace

void register_optimizer_kernels(KernelTable& table) { HWARO_OPTIMIZER_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
