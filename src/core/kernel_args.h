#pragma once
// KernelArgs: everything a kernel is called with. Tensors come outputs first,
// then inputs, in the order OpId's comment for the op gives; scalars and ints
// carry the op's parameters.
#include <cstdint>

#include "core/tensor_view.h"

namespace hwaro {

class Stream;

struct KernelArgs {
  static constexpr int kMaxTensors = 5;
  TensorView tensors[kMaxTensors];
  int num_tensors = 0;
  double scalars[8] = {};
  std::int64_t ints[8] = {};  // eight: a 2-D window's kernel, stride, padding and dilation
  Stream* stream = nullptr;

  const TensorView& operator[](int i) const { return tensors[i]; }
};

using KernelFn = void (*)(const KernelArgs& args);

}  // namespace hwaro
