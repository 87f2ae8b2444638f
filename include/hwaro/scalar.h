#pragma once
// hw::Scalar: a number that is not a tensor (the 2 in x + 2), with its kind,
// which type promotion needs: a float scalar makes an integer tensor's result
// float, an integer scalar leaves a float tensor's dtype alone.
#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "hwaro/dtype.h"

namespace hwaro {

class Scalar {
 public:
  enum class Kind : std::int8_t { Bool, Integral, Floating };

  Scalar() : Scalar(0) {}
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T value) {  // NOLINT(google-explicit-constructor): numbers convert implicitly, as in LibTorch
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      i_ = value ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::Integral;
      i_ = static_cast<std::int64_t>(value);
    } else {
      kind_ = Kind::Floating;
      d_ = static_cast<double>(value);
    }
  }
  Scalar(Half value) : Scalar(static_cast<float>(value)) {}      // NOLINT
  Scalar(BFloat16 value) : Scalar(static_cast<float>(value)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Floating; }
  bool is_integral() const { return kind_ == Kind::Integral; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Floating ? d_ : static_cast<double>(i_); }
  std::int64_t to_int64() const { return kind_ == Kind::Floating ? static_cast<std::int64_t>(d_) : i_; }
  template <typename T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return kind_ == Kind::Floating ? d_ != 0.0 : i_ != 0;
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_int64());
    else return static_cast<T>(static_cast<float>(to_double()));
  }

  // The dtype torch.tensor(value) would get: bool, int64 or float32.
  DType default_dtype() const;

 private:
  Kind kind_;
  union {
    std::int64_t i_;
    double d_;
  };
};

template <> inline double Scalar::to<double>() const { return to_double(); }

std::ostream& operator<<(std::ostream& out, const Scalar& s);

// The result dtype of an op between a tensor of dtype `tensor` and scalar `s` (PyTorch's rule: a
// scalar only changes the result when it is of a higher kind than the tensor).
DType result_type(DType tensor, const Scalar& s);

}  // namespace hwaro
