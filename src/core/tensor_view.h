#pragma once
// TensorView: what a kernel sees of a tensor. Non-owning: data, dtype, device,
// sizes and strides (in elements). The sizes and strides point into memory the
// caller keeps alive for the duration of the kernel call.
#include <cstdint>

#include "hwaro/device.h"
#include "hwaro/dtype.h"

namespace hwaro {

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::Float32;
  Device device{DeviceType::CPU};
  int ndim = 0;
  const std::int64_t* sizes = nullptr;
  const std::int64_t* strides = nullptr;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= sizes[i];
    return n;
  }
  bool is_contiguous() const {
    std::int64_t expected = 1;
    for (int i = ndim; i-- > 0;) {
      if (sizes[i] == 0) return true;
      if (sizes[i] != 1 && strides[i] != expected) return false;
      expected *= sizes[i];
    }
    return true;
  }
  template <typename T> T* ptr() const { return static_cast<T*>(data); }
};

}  // namespace hwaro
