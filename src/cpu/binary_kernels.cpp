// Binary elementwise kernels on the CPU (Add ... Where): tensors out, a, b, with a and b
// broadcast to out's shape (stride 0 along broadcast dimensions). The formulas live in
// kernels/binary_math.h; this file only loops over them.
#include <cstdint>
#include <type_traits>

#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/select_bits.h"
#include "cpu/strided_loop.h"
#include "kernels/binary_math.h"
#include "kernels/cast.h"

namespace hwaro::cpu {
namespace {

// out[i] = f(a[i], b[i]) with f on the compute type of In. Three loop shapes get plain indexed
// loops GCC vectorises: all contiguous, and a contiguous run against one broadcast element
// (tensor op scalar, scalar op tensor); everything else steps by byte strides.
template <typename Out, typename In, typename F>
void map_binary(const KernelArgs& args, F f, std::int64_t grain = kElementwiseGrain) {
  using C = kernels::compute_t<In>;
  const TensorView& out = args[0];
  auto apply = [f](In x, In y) { return kernels::cast_value<Out>(f(static_cast<C>(x), static_cast<C>(y))); };
  if (out.is_contiguous() && args[1].is_contiguous() && args[2].is_contiguous()) {
    Out* o = out.ptr<Out>();
    const In* x = args[1].ptr<const In>();
    const In* y = args[2].ptr<const In>();
    parallel_for(0, out.numel(), grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) o[i] = apply(x[i], y[i]);
    });
    return;
  }
  const TensorView* views[3] = {&out, &args[1], &args[2]};
  strided_for_each<3>(
      views,
      [&](char* const* p, const std::int64_t* s, std::int64_t n) {
        Out* o = reinterpret_cast<Out*>(p[0]);
        const In* x = reinterpret_cast<const In*>(p[1]);
        const In* y = reinterpret_cast<const In*>(p[2]);
        if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
          for (std::int64_t i = 0; i < n; ++i) o[i] = apply(x[i], y[i]);
        } else if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
          const In y0 = *y;
          for (std::int64_t i = 0; i < n; ++i) o[i] = apply(x[i], y0);
        } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(In)) {
          const In x0 = *x;
          for (std::int64_t i = 0; i < n; ++i) o[i] = apply(x0, y[i]);
        } else {
          for (std::int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                apply(*reinterpret_cast<const In*>(p[1] + i * s[1]), *reinterpret_cast<const In*>(p[2] + i * s[2]));
          }
        }
      },
      grain);
}

template <typename T> struct AddKernel {
  // out = a + scalars[0] * b
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    const C alpha = kernels::cast_value<C>(args.scalars[0]);
    if (alpha == C(1)) {  // the common case, without the multiply
      map_binary<T, T>(args, [](C x, C y) { return kernels::add(x, y, C(1)); });
    } else {
      map_binary<T, T>(args, [alpha](C x, C y) { return kernels::add(x, y, alpha); });
    }
  }
};

template <typename T> struct SubKernel {
  // out = a - scalars[0] * b
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    const C alpha = kernels::cast_value<C>(args.scalars[0]);
    if (alpha == C(1)) {
      map_binary<T, T>(args, [](C x, C y) { return kernels::sub(x, y, C(1)); });
    } else {
      map_binary<T, T>(args, [alpha](C x, C y) { return kernels::sub(x, y, alpha); });
    }
  }
};

inline constexpr std::int64_t kPowGrain = kElementwiseGrain / 8;

#define HWARO_BINARY_KERNEL(Name, Out, fn, grain)                                                   \
  template <typename T> struct Name##Kernel {                                                      \
    static void run(const KernelArgs& args) {                                                      \
      using C = kernels::compute_t<T>;                                                             \
      map_binary<Out, T>(args, [](C x, C y) { return kernels::fn(x, y); }, grain);                 \
    }                                                                                               \
  };
HWARO_BINARY_KERNEL(Mul, T, mul, kElementwiseGrain)
HWARO_BINARY_KERNEL(Div, T, div, kElementwiseGrain)
HWARO_BINARY_KERNEL(Pow, T, pow, kPowGrain)
HWARO_BINARY_KERNEL(Maximum, T, maximum, kElementwiseGrain)
HWARO_BINARY_KERNEL(Minimum, T, minimum, kElementwiseGrain)
HWARO_BINARY_KERNEL(Eq, bool, eq, kElementwiseGrain)
HWARO_BINARY_KERNEL(Ne, bool, ne, kElementwiseGrain)
HWARO_BINARY_KERNEL(Lt, bool, lt, kElementwiseGrain)
HWARO_BINARY_KERNEL(Le, bool, le, kElementwiseGrain)
HWARO_BINARY_KERNEL(Gt, bool, gt, kElementwiseGrain)
HWARO_BINARY_KERNEL(Ge, bool, ge, kElementwiseGrain)
HWARO_BINARY_KERNEL(LogicalAnd, bool, logical_and, kElementwiseGrain)
HWARO_BINARY_KERNEL(LogicalOr, bool, logical_or, kElementwiseGrain)
HWARO_BINARY_KERNEL(LogicalXor, bool, logical_xor, kElementwiseGrain)
#undef HWARO_BINARY_KERNEL

template <typename T> struct WhereKernel {
  // tensors: out, cond (bool), a, b; out = cond ? a : b (no arithmetic, so T is copied as is)
  static void run(const KernelArgs& args) {
    const TensorView* views[4] = {&args[0], &args[1], &args[2], &args[3]};
    strided_for_each<4>(views, [](char* const* p, const std::int64_t* s, std::int64_t n) {
      if (s[0] == sizeof(T) && s[1] == sizeof(bool) && s[2] == sizeof(T) && s[3] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        const bool* c = reinterpret_cast<const bool*>(p[1]);
        const T* x = reinterpret_cast<const T*>(p[2]);
        const T* y = reinterpret_cast<const T*>(p[3]);
        for (std::int64_t i = 0; i < n; ++i) o[i] = select_bits(c[i], x[i], y[i]);
      } else if (s[0] == sizeof(T) && s[1] == sizeof(bool) && s[2] == 0 && s[3] == sizeof(T)) {
        // masked_fill and where(cond, scalar, y): a broadcast value, the rest contiguous.
        T* o = reinterpret_cast<T*>(p[0]);
        const bool* c = reinterpret_cast<const bool*>(p[1]);
        const T value = *reinterpret_cast<const T*>(p[2]);
        const T* y = reinterpret_cast<const T*>(p[3]);
        for (std::int64_t i = 0; i < n; ++i) o[i] = select_bits(c[i], value, y[i]);
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          const bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
          *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
        }
      }
    });
  }
};

}  // namespace

void register_binary_kernels(KernelTable& table) { HWARO_BINARY_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
