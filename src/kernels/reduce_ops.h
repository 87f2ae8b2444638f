#pragma once
// Combine steps of the reductions, shared by the CPU loops and the CUDA kernels.
// Each reduction is an accumulator type, an identity, a way to take one input
// element into the accumulator's type, and an associative combine. The CPU
// combines partial accumulators in a fixed order, so results are reproducible.
#include <cstdint>
#include <type_traits>

#include "hwaro/half.h"
#include "hwaro/macros.h"
#include "kernels/binary_math.h"

namespace hwaro::kernels {

// The type a sum or product of T accumulates in (and, for integers, is returned in):
// float for the 16-bit floats, double for double, int64 for integers and bool.
template <typename T> struct SumAccType { using type = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>; };
template <> struct SumAccType<Half> { using type = float; };
template <> struct SumAccType<BFloat16> { using type = float; };
template <typename T> using sum_acc_t = typename SumAccType<T>::type;

// The output element type of sum and prod over T: int64 for integers and bool (as PyTorch), T otherwise.
template <typename T> using sum_out_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;

template <typename T> HWARO_HOST_DEVICE inline bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return v != v;
  }
}

// Integer sums and products wrap on overflow, as PyTorch's and as binary_math.h's add and mul
// (a signed overflow is undefined in C++).
struct SumOp {
  template <typename A> HWARO_HOST_DEVICE static A identity() { return A(0); }
  template <typename A> HWARO_HOST_DEVICE static A combine(A a, A b) { return add(a, b, A(1)); }
};

struct ProdOp {
  template <typename A> HWARO_HOST_DEVICE static A identity() { return A(1); }
  template <typename A> HWARO_HOST_DEVICE static A combine(A a, A b) { return mul(a, b); }
};

// all/any accumulate bools; an element counts as true when it is not zero (NaN is true).
struct AllOp {
  template <typename A> HWARO_HOST_DEVICE static A identity() { return true; }
  template <typename A> HWARO_HOST_DEVICE static A combine(A a, A b) { return a && b; }
};

struct AnyOp {
  template <typename A> HWARO_HOST_DEVICE static A identity() { return false; }
  template <typename A> HWARO_HOST_DEVICE static A combine(A a, A b) { return a || b; }
};

// A value and the index along the reduced dimension it came from.
template <typename T> struct ValueIndex {
  T value;
  std::int64_t index;
};

// max/min with index, as PyTorch: NaN wins (the first NaN), and among equal values the
// lowest index wins. `a` must come from lower indices than `b` (the CPU keeps that order);
// with that, the index tie-break below also holds when partial results are combined.
template <bool kIsMax> struct ArgExtremumOp {
  template <typename T> HWARO_HOST_DEVICE static ValueIndex<T> combine(ValueIndex<T> a, ValueIndex<T> b) {
    if (is_nan(a.value)) return a;
    if (is_nan(b.value)) return b;
    const bool b_better = kIsMax ? b.value > a.value : b.value < a.value;
    if (b_better || (b.value == a.value && b.index < a.index)) return b;
    return a;
  }
};
using MaxOp = ArgExtremumOp<true>;
using MinOp = ArgExtremumOp<false>;

}  // namespace hwaro::kernels
