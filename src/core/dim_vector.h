#pragma once
// DimVector: sizes or strides, stored inline up to kInlineDims dimensions so that
// making a tensor does not allocate for its shape; longer shapes go to the heap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "hwaro/int_array_ref.h"

namespace hwaro {

class DimVector {
 public:
  static constexpr std::size_t kInlineDims = 6;

  DimVector() = default;
  explicit DimVector(std::size_t n, std::int64_t value = 0) { assign(n, value); }
  DimVector(IntArrayRef values) { assign(values); }  // NOLINT: a copy of the values
  DimVector(std::initializer_list<std::int64_t> values) { assign(IntArrayRef(values)); }
  DimVector(const DimVector& other) { assign(other.ref()); }
  DimVector& operator=(const DimVector& other) {
    if (this != &other) assign(other.ref());
    return *this;
  }
  DimVector(DimVector&& other) noexcept { *this = std::move(other); }
  DimVector& operator=(DimVector&& other) noexcept {
    if (this == &other) return *this;
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
      size_ = other.size_;
      other.capacity_ = kInlineDims;
      other.size_ = 0;
    } else {
      assign(other.ref());
    }
    return *this;
  }

  void assign(std::size_t n, std::int64_t value) {
    reserve(n);
    size_ = n;
    std::fill(data(), data() + n, value);
  }
  void assign(IntArrayRef values) {
    reserve(values.size());
    size_ = values.size();
    std::copy(values.begin(), values.end(), data());
  }
  void push_back(std::int64_t v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data()[size_++] = v;
  }
  void insert(std::size_t pos, std::int64_t v) {
    push_back(0);
    std::copy_backward(data() + pos, data() + size_ - 1, data() + size_);
    data()[pos] = v;
  }
  void erase(std::size_t pos) {
    std::copy(data() + pos + 1, data() + size_, data() + pos);
    --size_;
  }
  void resize(std::size_t n, std::int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = n;
  }

  std::int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const std::int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t& operator[](std::size_t i) { return data()[i]; }
  std::int64_t operator[](std::size_t i) const { return data()[i]; }
  std::int64_t* begin() { return data(); }
  std::int64_t* end() { return data() + size_; }
  const std::int64_t* begin() const { return data(); }
  const std::int64_t* end() const { return data() + size_; }
  std::int64_t back() const { return data()[size_ - 1]; }
  IntArrayRef ref() const { return {data(), size_}; }
  operator IntArrayRef() const { return ref(); }  // NOLINT

 private:
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    auto bigger = std::make_unique<std::int64_t[]>(n);
    std::copy(data(), data() + size_, bigger.get());
    heap_ = std::move(bigger);
    capacity_ = n;
  }

  std::int64_t inline_[kInlineDims] = {};
  std::unique_ptr<std::int64_t[]> heap_;
  std::size_t size_ = 0;
  std::size_t capacity_ = kInlineDims;
};

}  // namespace hwaro
