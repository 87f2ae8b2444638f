#pragma once
// What every op entry point uses: device and dtype checks, dims, broadcasting,
// new outputs, and the call into the backend's kernel. Never names a backend.
#include <initializer_list>
#include <utility>

#include "core/backend_registry.h"
#include "core/dim_vector.h"
#include "core/kernel_args.h"
#include "core/tensor_impl.h"
#include "hwaro/tensor.h"

namespace hwaro::ops {

// An op's tensor argument and its name in the API ("self", "other", "mat2", ...).
struct NamedArg {
  const char* name;
  const Tensor& tensor;
};

// Throws hw::DeviceMismatchError, before anything runs, when the arguments live on different
// devices; the message is PyTorch's, naming both devices, the argument and the op.
void check_same_device(const char* op, std::initializer_list<NamedArg> args);
// The same for ops with optional tensors (a bias, a class weight): undefined ones are skipped.
// Composite functions (nn::functional's norms and losses) call it first, so that a tensor on
// another device is refused under their own name before any of their steps runs or writes.
void check_same_device_where_defined(const char* op, std::initializer_list<NamedArg> args);
void check_defined(const char* op, std::initializer_list<NamedArg> args);

// dim in [-ndim, ndim) -> [0, ndim); IndexError otherwise. ndim 0 accepts -1 and 0.
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim);

// The broadcast shape of a and b (numpy rules), or hw::Error naming the op and both shapes.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);

// A new contiguous tensor; uninitialised. `device` must be concrete (use detail::resolve first).
Tensor new_tensor(IntArrayRef sizes, DType dtype, Device device, bool pinned = false);

// What a kernel sees of t.
TensorView view_of(const Tensor& t);
// t seen with out_sizes by broadcasting: `strides` receives the (0 for broadcast) strides and
// must outlive the view.
TensorView broadcast_view(const Tensor& t, IntArrayRef out_sizes, DimVector& strides);

// Runs `op`'s kernel for `dtype` on `device` with args; hw::Error when the backend has none.
void launch(OpId op, DType dtype, Device device, KernelArgs& args);
// Whether the backend of `device` has a kernel for (op, dtype), for ops with a fallback.
bool has_kernel(OpId op, DType dtype, Device device);

// An in-place op must not change its target's dtype or shape: checks that result_dtype can be
// stored in self (PyTorch: "result type Float can't be cast to the desired output type Long").
void check_inplace_dtype(const char* op, const Tensor& self, DType result_dtype);

// An in-place op's target must not have elements that share memory (a dimension of size > 1
// with stride 0, as expand() makes): each write would land on the others, and the op's result
// would depend on the order of the writes (PyTorch refuses these too; fill_ and masked_fill_,
// which write one value everywhere, do not call this).
void check_no_internal_overlap(const char* op, const Tensor& self);
// The first dimension through which elements of t share memory (size > 1, stride 0), or -1.
std::int64_t internal_overlap_dim(const Tensor& t);

// Marks an in-place change for autograd's version check.
void bump_version(const Tensor& t);

}  // namespace hwaro::ops

namespace hwaro::ops {
// A view of base's storage with the given geometry (as torch.as_strided); shares storage and version.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset);
// The device to create a tensor on: options.device resolved to a concrete, existing one.
Device creation_device(const TensorOptions& options);
}  // namespace hwaro::ops
