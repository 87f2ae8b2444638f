#pragma once
// KernelTable: a backend's (op, dtype) -> kernel map, filled at start-up
// by one register_*_kernels function per kernel family (kernel_families.h).
#include "core/kernel_args.h"
#include "core/op_id.h"
#include "hwaro/dtype.h"

namespace hwaro {

class KernelTable {
 public:
  void set(OpId op, DType dtype, KernelFn fn) { fns_[static_cast<int>(op)][static_cast<int>(dtype)] = fn; }
  KernelFn get(OpId op, DType dtype) const { return fns_[static_cast<int>(op)][static_cast<int>(dtype)]; }

  // Registers Kernel<T>::run for each listed C++ type T.
  template <template <typename> class Kernel, typename... Ts> void set_types(OpId op) {
    (set(op, dtype_of<Ts>(), &Kernel<Ts>::run), ...);
  }

 private:
  KernelFn fns_[kNumOps][kNumDTypes] = {};
};

}  // namespace hwaro

// Type lists for set_types.
#define HWARO_ALL_TYPES bool, std::uint8_t, std::int32_t, std::int64_t, Half, BFloat16, float, double
#define HWARO_NUMERIC_TYPES std::uint8_t, std::int32_t, std::int64_t, Half, BFloat16, float, double
#define HWARO_FLOAT_TYPES Half, BFloat16, float, double
