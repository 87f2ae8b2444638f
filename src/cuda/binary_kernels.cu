// Binary elementwise kernels on CUDA (Add ... Where): tensors out, a, b, with a and b broadcast to
// out's shape (stride 0 along broadcast dimensions), through the one elementwise kernel
// (elementwise.cuh). The formulas are kernels/binary_math.h, shared with the CPU.
#include <cstdint>

#include "core/kernel_coverage.h"
#include "cuda/elementwise.cuh"
#include "cuda/kernel_families.h"
#include "kernels/binary_math.h"
#include "kernels/cast.h"

namespace hwaro::cuda {
namespace {

// out = cast<Out>(Fn(compute_t<In>(a), compute_t<In>(b))).
template <typename Out, typename In, typename Fn> struct BinaryFn {
  Fn fn;
  __device__ Out operator()(In a, In b) const {
    using C = kernels::compute_t<In>;
    return kernels::cast_value<Out>(fn(static_cast<C>(a), static_cast<C>(b)));
  }
};

template <typename Out, typename In, typename Fn> void map_binary(const KernelArgs& args, Fn fn) {
  launch_elementwise<Out, In, In>(args, BinaryFn<Out, In, Fn>{fn});
}

template <typename C> struct AddFn {
  C alpha;
  __device__ C operator()(C a, C b) const { return kernels::add(a, b, alpha); }
};
template <typename C> struct SubFn {
  C alpha;
  __device__ C operator()(C a, C b) const { return kernels::sub(a, b, alpha); }
};

template <typename T> struct AddKernel {
  // out = a + scalars[0] * b
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    map_binary<T, T>(args, AddFn<C>{kernels::cast_value<C>(args.scalars[0])});
  }
};

template <typename T> struct SubKernel {
  // out = a - scalars[0] * b
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    map_binary<T, T>(args, SubFn<C>{kernels::cast_value<C>(args.scalars[0])});
  }
};

#define HWARO_BINARY_KERNEL(Name, Out, fn)                                                       \
  struct Name##Fn {                                                                              \
    template <typename C> __device__ auto operator()(C a, C b) const { return kernels::fn(a, b); } \
  };                                                                                             \
  template <typename T> struct Name##Kernel {                                                    \
    static void run(const KernelArgs& args) { map_binary<Out, T>(args, Name##Fn{}); }            \
  };
HWARO_BINARY_KERNEL(Mul, T, mul)
HWARO_BINARY_KERNEL(Div, T, div)
HWARO_BINARY_KERNEL(Pow, T, pow)
HWARO_BINARY_KERNEL(Maximum, T, maximum)
HWARO_BINARY_KERNEL(Minimum, T, minimum)
HWARO_BINARY_KERNEL(Eq, bool, eq)
HWARO_BINARY_KERNEL(Ne, bool, ne)
HWARO_BINARY_KERNEL(Lt, bool, lt)
HWARO_BINARY_KERNEL(Le, bool, le)
HWARO_BINARY_KERNEL(Gt, bool, gt)
HWARO_BINARY_KERNEL(Ge, bool, ge)
HWARO_BINARY_KERNEL(LogicalAnd, bool, logical_and)
HWARO_BINARY_KERNEL(LogicalOr, bool, logical_or)
HWARO_BINARY_KERNEL(LogicalXor, bool, logical_xor)
#undef HWARO_BINARY_KERNEL

template <typename T> struct SelectFn {
  __device__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};

template <typename T> struct WhereKernel {
  // tensors: out, cond (bool), a, b; out = cond ? a : b (no arithmetic, so T is copied as is)
  static void run(const KernelArgs& args) { launch_elementwise<T, bool, T, T>(args, SelectFn<T>{}); }
};

}  // namespace

void register_binary_kernels(KernelTable& table) { HWARO_BINARY_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
