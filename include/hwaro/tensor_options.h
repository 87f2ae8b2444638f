#pragma once
// TensorOptions: how a new tensor is made. An aggregate, so that
//   hw::zeros({64, 10}, {.dtype = hw::kFloat32, .device = dev, .requires_grad = false})
// works as written. An empty dtype means the function's default (float32 for
// most; the value's own type for tensor(), full() and arange()).
#include <optional>

#include "hwaro/device.h"
#include "hwaro/dtype.h"

namespace hwaro {

struct TensorOptions {
  std::optional<DType> dtype{};
  Device device{DeviceType::CPU};
  bool requires_grad = false;
  bool pin_memory = false;  // CPU tensors only: allocate in page-locked memory for fast, async copies to a GPU

  DType dtype_or(DType fallback) const { return dtype.value_or(fallback); }
};

}  // namespace hwaro
