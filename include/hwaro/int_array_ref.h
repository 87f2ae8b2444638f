#pragma once
// IntArrayRef: a non-owning view of int64 sizes, strides or dims that accepts a
// braced list ({64, 784}), a std::vector or a pointer and length, as LibTorch's.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <vector>

namespace hwaro {

class IntArrayRef {
 public:
  IntArrayRef() = default;
  // Like LibTorch's ArrayRef: the list lives until the end of the full expression, which is
  // exactly as long as a call's argument needs it, so GCC's lifetime warning does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  IntArrayRef(std::initializer_list<std::int64_t> list) : data_(list.begin()), size_(list.size()) {}  // NOLINT
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const std::vector<std::int64_t>& v) : data_(v.data()), size_(v.size()) {}               // NOLINT
  IntArrayRef(std::span<const std::int64_t> s) : data_(s.data()), size_(s.size()) {}                  // NOLINT
  IntArrayRef(const std::int64_t* data, std::size_t size) : data_(data), size_(size) {}
  // A single value, so that a function taking dims also takes one dim.
  IntArrayRef(const std::int64_t& one) : data_(&one), size_(1) {}  // NOLINT

  const std::int64_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::int64_t* begin() const { return data_; }
  const std::int64_t* end() const { return data_ + size_; }
  std::int64_t operator[](std::size_t i) const { return data_[i]; }
  std::int64_t back() const { return data_[size_ - 1]; }
  std::vector<std::int64_t> vec() const { return {begin(), end()}; }

  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i) {
      if (a.data_[i] != b.data_[i]) return false;
    }
    return true;
  }

 private:
  const std::int64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Prints as [2, 3].
std::ostream& operator<<(std::ostream& out, IntArrayRef values);

}  // namespace hwaro
