#pragma once
// Element types and PyTorch's type-promotion rules.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "hwaro/half.h"

namespace hwaro {

// Ordered by promotion rank (bool < uint8 < int32 < int64 < 16-bit floats < float32 < float64).
enum class DType : std::int8_t { Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64 };
inline constexpr int kNumDTypes = 8;

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kHalf = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kDouble = DType::Float64;

// "float32", "int64", ...
const char* dtype_name(DType dtype);
std::ostream& operator<<(std::ostream& out, DType dtype);

constexpr std::size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::Bool:
    case DType::UInt8: return 1;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::Float32: return 4;
    case DType::Int64:
    case DType::Float64: return 8;
  }
  return 0;
}

constexpr bool is_floating_point(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
// Integral types, bool excluded (as torch's is_integral(include_bool=False)).
constexpr bool is_integral(DType d) { return d == DType::UInt8 || d == DType::Int32 || d == DType::Int64; }

// torch.promote_types: the smallest type both a and b convert to without losing their kind.
constexpr DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16)) {
    return DType::Float32;
  }
  return static_cast<std::int8_t>(a) > static_cast<std::int8_t>(b) ? a : b;
}

// The dtype PyTorch gives a float result when the inputs are not floating point.
inline constexpr DType kDefaultFloatDType = DType::Float32;

// The C++ type stored for each dtype, and back.
template <DType D> struct CppTypeOf;
template <> struct CppTypeOf<DType::Bool> { using type = bool; };
template <> struct CppTypeOf<DType::UInt8> { using type = std::uint8_t; };
template <> struct CppTypeOf<DType::Int32> { using type = std::int32_t; };
template <> struct CppTypeOf<DType::Int64> { using type = std::int64_t; };
template <> struct CppTypeOf<DType::Float16> { using type = Half; };
template <> struct CppTypeOf<DType::BFloat16> { using type = BFloat16; };
template <> struct CppTypeOf<DType::Float32> { using type = float; };
template <> struct CppTypeOf<DType::Float64> { using type = double; };
template <DType D> using cpp_type_t = typename CppTypeOf<D>::type;

template <typename T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<T, Half>) return DType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else static_assert(sizeof(T) == 0, "no hwaro dtype for this C++ type");
}

}  // namespace hwaro
