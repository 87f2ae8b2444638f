#pragma once
// Allocator and DataPtr: raw memory of one device. A DataPtr owns one
// allocation and returns it through its deleter; an Allocator hands them out.
// Caching allocators (CPU large blocks, CUDA, pinned host) are Allocators too.
#include <cstddef>
#include <utility>

#include "hwaro/device.h"

namespace hwaro {

class DataPtr {
 public:
  using Deleter = void (*)(void* context, void* data);

  DataPtr() = default;
  DataPtr(void* data, void* context, Deleter deleter, Device device)
      : data_(data), context_(context), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { swap(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    DataPtr tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~DataPtr() {
    if (deleter_ != nullptr) deleter_(context_, data_);
  }

  void* get() const { return data_; }
  Device device() const { return device_; }

 private:
  void swap(DataPtr& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(context_, o.context_);
    std::swap(deleter_, o.deleter_);
    std::swap(device_, o.device_);
  }

  void* data_ = nullptr;
  void* context_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_{DeviceType::CPU};
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // nbytes may be 0; the result is then a valid, empty DataPtr.
  virtual DataPtr allocate(std::size_t nbytes) = 0;
  // Page-locked host memory (pin_memory()): copies from it to a GPU can be asynchronous.
  virtual bool is_pinned() const { return false; }
  // Pinned allocators: whether an asynchronous copy from or into the live allocation
  // containing ptr may still be running, so that its memory must not be rewritten yet.
  virtual bool copies_pending(const void* /*ptr*/) { return false; }
};

}  // namespace hwaro
