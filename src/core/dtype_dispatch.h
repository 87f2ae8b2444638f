#pragma once
// visit_dtype: calls a template lambda with the C++ type of a runtime dtype.
//   visit_dtype(dt, [&]<typename T>() { ... T ... });
#include "hwaro/dtype.h"
#include "hwaro/errors.h"

namespace hwaro {

template <typename F> decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return f.template operator()<bool>();
    case DType::UInt8: return f.template operator()<std::uint8_t>();
    case DType::Int32: return f.template operator()<std::int32_t>();
    case DType::Int64: return f.template operator()<std::int64_t>();
    case DType::Float16: return f.template operator()<Half>();
    case DType::BFloat16: return f.template operator()<BFloat16>();
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
  }
  HWARO_ASSERT(false, "unknown dtype");
  return f.template operator()<float>();
}

}  // namespace hwaro
