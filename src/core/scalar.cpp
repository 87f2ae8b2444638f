#include "hwaro/scalar.h"

#include <ostream>

namespace hwaro {

DType Scalar::default_dtype() const {
  switch (kind_) {
    case Kind::Bool: return DType::Bool;
    case Kind::Integral: return DType::Int64;
    case Kind::Floating: return kDefaultFloatDType;
  }
  return kDefaultFloatDType;
}

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  if (s.is_floating_point()) return out << s.to_double();
  if (s.is_bool()) return out << (s.to<bool>() ? "True" : "False");
  return out << s.to_int64();
}

DType result_type(DType tensor, const Scalar& s) {
  const int tensor_kind = tensor == DType::Bool ? 0 : (is_floating_point(tensor) ? 2 : 1);
  const int scalar_kind = static_cast<int>(s.kind());
  if (scalar_kind <= tensor_kind) return tensor;
  return s.default_dtype();
}

}  // namespace hwaro
