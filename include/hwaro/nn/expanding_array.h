#pragma once
// hw::ExpandingArray<D> (LibTorch's torch::ExpandingArray): D int64 values given as one value
// for every axis (3 -> {3, 3}) or as D values ({3, 5}). Layer options hold their kernel sizes,
// strides and paddings as these, and hand them to functional as IntArrayRef.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "hwaro/errors.h"
#include "hwaro/int_array_ref.h"

namespace hwaro {

template <std::size_t D> class ExpandingArray {
 public:
  ExpandingArray(std::int64_t value) { values_.fill(value); }  // NOLINT: 3 means {3, 3}
  ExpandingArray(std::initializer_list<std::int64_t> list) {   // NOLINT: {3, 5}
    HWARO_CHECK(list.size() == D, "expected ", D, " values (one per spatial axis), got ", list.size());
    std::size_t i = 0;
    for (std::int64_t v : list) values_[i++] = v;
  }
  std::int64_t operator[](std::size_t i) const { return values_[i]; }
  IntArrayRef ref() const { return IntArrayRef(values_.data(), D); }
  operator IntArrayRef() const { return ref(); }  // NOLINT

 private:
  std::array<std::int64_t, D> values_{};
};

}  // namespace hwaro
