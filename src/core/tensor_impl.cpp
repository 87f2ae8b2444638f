#include "core/tensor_impl.h"

#include <ostream>

#include "hwaro/errors.h"

namespace hwaro {

std::ostream& operator<<(std::ostream& out, IntArrayRef values) {
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out << ']';
}

void TensorImpl::set_data(const TensorImpl& other) {
  storage_ = other.storage_;
  sizes_ = other.sizes_;
  strides_ = other.strides_;
  storage_offset_ = other.storage_offset_;
  numel_ = other.numel_;
  dtype_ = other.dtype_;
  contiguous_ = other.contiguous_;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  std::int64_t stride = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

std::int64_t product(IntArrayRef sizes) {
  std::int64_t n = 1;
  for (std::int64_t s : sizes) n *= s;
  return n;
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  std::int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

TensorImpl::TensorImpl(std::shared_ptr<Storage> storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
                       std::int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      storage_offset_(storage_offset),
      numel_(product(sizes)),
      dtype_(dtype),
      contiguous_(is_contiguous_layout(sizes, strides)) {
  HWARO_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  HWARO_ASSERT(storage_ != nullptr);
}

TensorImpl::TensorImpl(std::shared_ptr<Storage> storage, DType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(contiguous_strides(sizes)),
      storage_offset_(0),
      numel_(product(sizes)),
      dtype_(dtype),
      contiguous_(true) {}

}  // namespace hwaro
