#pragma once
// TensorImpl: what a hw::Tensor handle points to. A strided view over a Storage:
// element (i0, i1, ...) lives at data + (offset + sum(ik * stride[k])) * element_size.
#include <cstdint>
#include <memory>

#include "core/dim_vector.h"
#include "core/storage.h"
#include "hwaro/dtype.h"

namespace hwaro {

// What autograd keeps per tensor (its gradient, the node that made it). Defined by the
// autograd layer; core only owns the slot, so that tensors below autograd stay plain.
struct AutogradMetaBase {
  virtual ~AutogradMetaBase() = default;
};

class TensorImpl {
 public:
  TensorImpl(std::shared_ptr<Storage> storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
             std::int64_t storage_offset);
  // A contiguous tensor over the whole storage.
  TensorImpl(std::shared_ptr<Storage> storage, DType dtype, IntArrayRef sizes);

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_.ref(); }
  IntArrayRef strides() const { return strides_.ref(); }
  std::int64_t dim() const { return static_cast<std::int64_t>(sizes_.size()); }
  std::int64_t numel() const { return numel_; }
  std::int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return contiguous_; }
  void* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<std::int64_t>(element_size(dtype_));
  }

  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool value) { requires_grad_ = value; }
  AutogradMetaBase* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaBase> meta) { autograd_meta_ = std::move(meta); }

  // Points this tensor at other's storage and geometry (dtype included), keeping its identity:
  // what Module::to() does to a parameter so that every holder of the handle sees the move.
  void set_data(const TensorImpl& other);

 private:
  std::shared_ptr<Storage> storage_;
  DimVector sizes_;
  DimVector strides_;
  std::int64_t storage_offset_;
  std::int64_t numel_;
  DType dtype_;
  bool contiguous_;
  bool requires_grad_ = false;
  std::unique_ptr<AutogradMetaBase> autograd_meta_;
};

// Row-major strides for sizes.
DimVector contiguous_strides(IntArrayRef sizes);
// Number of elements of a shape.
std::int64_t product(IntArrayRef sizes);
// True when sizes/strides describe a row-major layout (size-1 dims may have any stride).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);

}  // namespace hwaro
