#pragma once
// How a reduction's input is handed to its kernel: as a contiguous [outer, R, inner] block
// (OpId's reduction convention), with the output shapes. Internal to src/ops.
#include "core/dim_vector.h"
#include "core/kernel_args.h"
#include "hwaro/tensor.h"

namespace hwaro::ops {

struct ReductionLayout {
  Tensor input;             // contiguous; viewed as [outer, R, inner]
  std::int64_t outer = 1, r = 1, inner = 1;
  DimVector kept_sizes;     // output shape with keepdim (reduced dims of size 1)
  DimVector squeezed_sizes; // output shape without keepdim
  DimVector block_sizes;    // {outer, R, inner}, backing the kernel's view
  DimVector block_strides;

  const DimVector& out_sizes(bool keepdim) const { return keepdim ? kept_sizes : squeezed_sizes; }
  // The input as the kernel's [outer, R, inner] view.
  TensorView input_view() const;
};

// Wraps and checks dims (IndexError out of range, hw::Error for a repeated dim); empty dims means
// all. The reduced dims are permuted together (a copy) only when they are not already one
// consecutive block of a contiguous tensor; a reduction over the last or all dims never copies.
ReductionLayout reduction_layout(const char* op, const Tensor& x, IntArrayRef dims);

// The output shape of reducing `dims` of x (checked as above), and the number of elements each
// output element reduces; for composites that need these without arranging the input.
DimVector reduction_out_sizes(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim);
std::int64_t reduction_count(const char* op, const Tensor& x, IntArrayRef dims);

// The kernel arguments of `layout` with the given outputs first (each [outer, inner] contiguous).
KernelArgs reduction_args(const ReductionLayout& layout, std::initializer_list<Tensor> outputs);

}  // namespace hwaro::ops
