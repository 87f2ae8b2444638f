#pragma once
// KernelArgs: everything a kernel is called with. Tensors come outputs first,
// then inputs, in the order OpId's comment for the op gives; scalars and ints
// carry the op's parameters.
#include <cstdint>

#include "core/tensor_view.h"

namespace hwaro {

class Stream;

inline constexpr int kMaxKernelTensors = 5;

// One item of a multi-tensor op (the fused optimiser steps): the data of up to
// kMaxKernelTensors contiguous tensors of one length, dtype and device (nullptr: that
// tensor is absent, e.g. no momentum buffer), and scalars of this item alone (Adam's bias
// corrections, which depend on the parameter's own step count).
struct TensorTuple {
  void* data[kMaxKernelTensors] = {};
  std::int64_t numel = 0;
  double scalars[2] = {};
};

struct KernelArgs {
  static constexpr int kMaxTensors = kMaxKernelTensors;
  TensorView tensors[kMaxTensors];
  int num_tensors = 0;
  double scalars[8] = {};
  std::int64_t ints[8] = {};  // eight: a 2-D window's kernel, stride, padding and dilation
  // Multi-tensor ops only: their items, all on the device and of the dtype of tensors[0]
  // (the first item's first tensor, which names the device to run on).
  const TensorTuple* tuples = nullptr;
  std::int64_t num_tuples = 0;
  Stream* stream = nullptr;

  const TensorView& operator[](int i) const { return tensors[i]; }
};

using KernelFn = void (*)(const KernelArgs& args);

}  // namespace hwaro
