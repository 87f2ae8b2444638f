// Unary elementwise kernels on CUDA (Neg ... PowScalar): tensors out, in of one shape, through the
// one elementwise kernel (elementwise.cuh). The formulas are kernels/unary_math.h, shared with the CPU.
#include <cstdint>
#include <type_traits>

#include "core/kernel_coverage.h"
#include "cuda/elementwise.cuh"
#include "cuda/kernel_families.h"
#include "kernels/cast.h"
#include "kernels/unary_math.h"

namespace hwaro::cuda {
namespace {

// out = cast<Out>(Fn(compute_t<In>(x))): Half and BFloat16 are computed in float, as on the CPU.
template <typename Out, typename In, typename Fn> struct UnaryFn {
  Fn fn;
  __device__ Out operator()(In x) const {
    return kernels::cast_value<Out>(fn(static_cast<kernels::compute_t<In>>(x)));
  }
};

template <typename Out, typename In, typename Fn> void map_unary(const KernelArgs& args, Fn fn) {
  launch_elementwise<Out, In>(args, UnaryFn<Out, In, Fn>{fn});
}

#define HWARO_UNARY_KERNEL(Name, fn)                                                   \
  struct Name##Fn {                                                                    \
    template <typename C> __device__ C operator()(C x) const { return kernels::fn(x); } \
  };                                                                                   \
  template <typename T> struct Name##Kernel {                                          \
    static void run(const KernelArgs& args) { map_unary<T, T>(args, Name##Fn{}); }     \
  };
HWARO_UNARY_KERNEL(Neg, neg)
HWARO_UNARY_KERNEL(Abs, abs)
HWARO_UNARY_KERNEL(Relu, relu)
HWARO_UNARY_KERNEL(Exp, exp)
HWARO_UNARY_KERNEL(Expm1, expm1)
HWARO_UNARY_KERNEL(Log, log)
HWARO_UNARY_KERNEL(Log1p, log1p)
HWARO_UNARY_KERNEL(Sqrt, sqrt)
HWARO_UNARY_KERNEL(Rsqrt, rsqrt)
HWARO_UNARY_KERNEL(Tanh, tanh)
HWARO_UNARY_KERNEL(Sigmoid, sigmoid)
HWARO_UNARY_KERNEL(Silu, silu)
HWARO_UNARY_KERNEL(GeluTanh, gelu_tanh)
HWARO_UNARY_KERNEL(GeluErf, gelu_erf)
#undef HWARO_UNARY_KERNEL

template <typename T> struct GeluKernel {
  // ints[0] = 1: tanh approximation
  static void run(const KernelArgs& args) {
    if (args.ints[0] != 0) {
      map_unary<T, T>(args, GeluTanhFn{});
    } else {
      map_unary<T, T>(args, GeluErfFn{});
    }
  }
};

struct IsZeroFn {
  template <typename C> __device__ bool operator()(C x) const { return x == C(0); }
};

template <typename In> struct LogicalNotKernel {
  // out bool
  static void run(const KernelArgs& args) { map_unary<bool, In>(args, IsZeroFn{}); }
};

template <typename C> struct ClampFn {
  bool has_lo, has_hi;
  C lo, hi;
  __device__ C operator()(C x) const { return kernels::clamp(x, has_lo, lo, has_hi, hi); }
};

template <typename T> struct ClampKernel {
  // ints[0] bit 0: has min (scalars[0]), bit 1: has max (scalars[1])
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    map_unary<T, T>(args, ClampFn<C>{(args.ints[0] & 1) != 0, (args.ints[0] & 2) != 0,
                                     kernels::cast_value<C>(args.scalars[0]), kernels::cast_value<C>(args.scalars[1])});
  }
};

template <typename C> struct IntPowFn {
  std::int64_t exponent;
  __device__ C operator()(C x) const { return kernels::int_pow(x, exponent); }
};
template <typename C> struct FloatPowFn {
  C exponent;
  __device__ C operator()(C x) const { return kernels::float_pow(x, exponent); }
};

template <typename T> struct PowScalarKernel {
  // out = in ^ scalars[0]; integral types take the exponent as an integer (the op checked it is one)
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    if constexpr (std::is_integral_v<T>) {
      map_unary<T, T>(args, IntPowFn<C>{static_cast<std::int64_t>(args.scalars[0])});
    } else {
      map_unary<T, T>(args, FloatPowFn<C>{static_cast<C>(args.scalars[0])});
    }
  }
};

}  // namespace

void register_unary_kernels(KernelTable& table) { HWARO_UNARY_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
