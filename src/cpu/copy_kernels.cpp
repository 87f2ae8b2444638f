// Copy (with dtype conversion), Fill and Arange on the CPU.
#include <cstring>

#include "core/dtype_dispatch.h"
#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/strided_loop.h"
#include "kernels/cast.h"

namespace hwaro::cpu {
namespace {

template <typename Out> struct CopyKernel {
  // tensors: out, in (any dtype)
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& in = args[1];
    if (in.dtype == out.dtype && in.is_contiguous() && out.is_contiguous()) {
      const std::int64_t n = out.numel();
      auto* dst = static_cast<char*>(out.data);
      const auto* src = static_cast<const char*>(in.data);
      parallel_for(0, n, kElementwiseGrain * 4, [&](std::int64_t b, std::int64_t e) {
        std::memcpy(dst + b * sizeof(Out), src + b * sizeof(Out), (e - b) * sizeof(Out));
      });
      return;
    }
    visit_dtype(in.dtype, [&]<typename In>() {
      const TensorView* views[2] = {&out, &in};
      strided_for_each<2>(views, [](char* const* p, const std::int64_t* s, std::int64_t n) {
        if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
          auto* o = reinterpret_cast<Out*>(p[0]);
          const auto* x = reinterpret_cast<const In*>(p[1]);
          for (std::int64_t i = 0; i < n; ++i) o[i] = kernels::cast_value<Out>(x[i]);
        } else {
          for (std::int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<Out*>(p[0] + i * s[0]) = kernels::cast_value<Out>(*reinterpret_cast<const In*>(p[1] + i * s[1]));
          }
        }
      });
    });
  }
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
  static void run(const KernelArgs& args) {
    const T value = scalar_arg<T>(args, 0);
    const TensorView* views[1] = {&args[0]};
    strided_for_each<1>(views, [value](char* const* p, const std::int64_t* s, std::int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (std::int64_t i = 0; i < n; ++i) o[i] = value;
      } else {
        for (std::int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = value;
      }
    });
  }
};

template <typename T> struct ArangeKernel {
  // tensors: out (contiguous). out[i] = start + i * step
  static void run(const KernelArgs& args) {
    T* out = args[0].ptr<T>();
    const std::int64_t n = args[0].numel();
    if constexpr (std::is_integral_v<T>) {
      const std::int64_t start = args.ints[0], step = args.ints[1];
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + i * step);
    } else {
      const double start = args.scalars[0], step = args.scalars[1];
      for (std::int64_t i = 0; i < n; ++i) out[i] = kernels::cast_value<T>(start + static_cast<double>(i) * step);
    }
  }
};

}  // namespace

void register_copy_kernels(KernelTable& table) { HWARO_COPY_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
