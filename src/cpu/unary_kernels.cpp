// Unary elementwise kernels on the CPU (Neg ... PowScalar): tensors out, in of one shape.
// The formulas live in kernels/unary_math.h; this file only loops over them.
#include <cstdint>
#include <type_traits>

#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/strided_loop.h"
#include "kernels/cast.h"
#include "kernels/unary_math.h"

namespace hwaro::cpu {
namespace {

// out[i] = f(in[i]). f takes and returns the compute type (float for Half/BFloat16) or,
// for LogicalNot, returns bool. A contiguous pair gets a plain indexed loop GCC can vectorise.
template <typename Out, typename In, typename F>
void map_unary(const KernelArgs& args, F f, std::int64_t grain = kElementwiseGrain) {
  using C = kernels::compute_t<In>;
  const TensorView& out = args[0];
  const TensorView& in = args[1];
  auto apply = [f](In v) { return kernels::cast_value<Out>(f(static_cast<C>(v))); };
  if (out.is_contiguous() && in.is_contiguous()) {
    Out* o = out.ptr<Out>();
    const In* x = in.ptr<const In>();
    parallel_for(0, out.numel(), grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) o[i] = apply(x[i]);
    });
    return;
  }
  const TensorView* views[2] = {&out, &in};
  strided_for_each<2>(
      views,
      [&](char* const* p, const std::int64_t* s, std::int64_t n) {
        if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
          Out* o = reinterpret_cast<Out*>(p[0]);
          const In* x = reinterpret_cast<const In*>(p[1]);
          for (std::int64_t i = 0; i < n; ++i) o[i] = apply(x[i]);
        } else {
          for (std::int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<Out*>(p[0] + i * s[0]) = apply(*reinterpret_cast<const In*>(p[1] + i * s[1]));
          }
        }
      },
      grain);
}

// Transcendental bodies cost tens of cycles per element, so they split into threads sooner.
inline constexpr std::int64_t kTranscendentalGrain = kElementwiseGrain / 8;

#define HWARO_UNARY_KERNEL(Name, fn, grain)                                                 \
  template <typename T> struct Name##Kernel {                                              \
    static void run(const KernelArgs& args) {                                              \
      map_unary<T, T>(args, [](kernels::compute_t<T> x) { return kernels::fn(x); }, grain); \
    }                                                                                       \
  };
HWARO_UNARY_KERNEL(Neg, neg, kElementwiseGrain)
HWARO_UNARY_KERNEL(Abs, abs, kElementwiseGrain)
HWARO_UNARY_KERNEL(Relu, relu, kElementwiseGrain)
HWARO_UNARY_KERNEL(Exp, exp, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Expm1, expm1, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Log, log, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Log1p, log1p, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Sqrt, sqrt, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Rsqrt, rsqrt, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Tanh, tanh, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Sigmoid, sigmoid, kTranscendentalGrain)
HWARO_UNARY_KERNEL(Silu, silu, kTranscendentalGrain)
#undef HWARO_UNARY_KERNEL

template <typename T> struct GeluKernel {
  // ints[0] = 1: tanh approximation
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    if (args.ints[0] != 0) {
      map_unary<T, T>(args, [](C x) { return kernels::gelu_tanh(x); }, kTranscendentalGrain);
    } else {
      map_unary<T, T>(args, [](C x) { return kernels::gelu_erf(x); }, kTranscendentalGrain);
    }
  }
};

template <typename In> struct LogicalNotKernel {
  // out bool
  static void run(const KernelArgs& args) {
    map_unary<bool, In>(args, [](kernels::compute_t<In> x) { return x == kernels::compute_t<In>(0); });
  }
};

template <typename T> struct ClampKernel {
  // ints[0] bit 0: has min (scalars[0]), bit 1: has max (scalars[1])
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    const bool has_lo = (args.ints[0] & 1) != 0;
    const bool has_hi = (args.ints[0] & 2) != 0;
    const C lo = kernels::cast_value<C>(args.scalars[0]);
    const C hi = kernels::cast_value<C>(args.scalars[1]);
    map_unary<T, T>(args, [=](C x) { return kernels::clamp(x, has_lo, lo, has_hi, hi); });
  }
};

template <typename T> struct PowScalarKernel {
  // out = in ^ scalars[0]; integral types take the exponent as an integer (the op checked it is one)
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    if constexpr (std::is_integral_v<T>) {
      const auto e = static_cast<std::int64_t>(args.scalars[0]);
      map_unary<T, T>(args, [e](C x) { return kernels::int_pow(x, e); });
    } else {
      const C e = static_cast<C>(args.scalars[0]);
      if (e == C(2)) {  // the common square: vectorises
        map_unary<T, T>(args, [](C x) { return x * x; });
      } else {
        map_unary<T, T>(args, [e](C x) { return kernels::float_pow(x, e); }, kTranscendentalGrain);
      }
    }
  }
};

}  // namespace

void register_unary_kernels(KernelTable& table) { HWARO_UNARY_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
