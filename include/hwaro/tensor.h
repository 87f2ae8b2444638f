#pragma once
// hw::Tensor: a cheap handle (a shared pointer) to a strided view of a Storage.
// Copying a Tensor copies the handle, not the data; views (view, transpose,
// narrow, ...) share storage with their base. Methods mirror LibTorch's.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hwaro/device.h"
#include "hwaro/dtype.h"
#include "hwaro/errors.h"
#include "hwaro/int_array_ref.h"
#include "hwaro/scalar.h"
#include "hwaro/tensor_options.h"

namespace hwaro {

class TensorImpl;
class Tensor;
namespace autograd {
class Node;
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  // True when both handles point to the same tensor (not merely equal values).
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // ---- metadata ----
  Device device() const;
  DType dtype() const;
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  std::int64_t size(std::int64_t dim) const;    // negative dims count from the end
  std::int64_t stride(std::int64_t dim) const;
  std::int64_t dim() const;
  std::int64_t numel() const;
  std::int64_t storage_offset() const;
  std::size_t element_size() const;
  std::size_t nbytes() const;
  bool is_contiguous() const;
  bool is_pinned() const;
  bool is_floating_point() const { return hwaro::is_floating_point(dtype()); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  // True when both tensors view the same storage.
  bool is_alias_of(const Tensor& other) const;
  // Counts in-place changes to the storage (shared by all views of it).
  std::uint32_t version() const;
  TensorOptions options() const;

  // ---- autograd (see hwaro/autograd.h) ----
  bool requires_grad() const;
  Tensor& set_requires_grad(bool value);  // leaves only; floating dtypes only
  Tensor& requires_grad_(bool value = true) { return set_requires_grad(value); }
  // The accumulated gradient of a leaf (undefined until a backward reaches it).
  const Tensor& grad() const;
  // The gradient slot itself, for optimisers: assign Tensor() to clear it.
  Tensor& mutable_grad() const;
  // The node that made this tensor; null for leaves and for tensors made without grad.
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  // Makes a non-leaf keep its .grad() too.
  void retain_grad() const;
  bool retains_grad() const;
  // Computes gradients of this tensor w.r.t. the graph's leaves. gradient: d(out)/d(this);
  // may be omitted for a one-element tensor.
  void backward(const Tensor& gradient = {}, bool retain_graph = false) const;
  // Points this tensor at new_data's storage, keeping its identity (as LibTorch's set_data).
  void set_data(const Tensor& new_data) const;

  // ---- raw data (CPU tensors; dtype checked) ----
  void* data_ptr() const;
  template <typename T> T* data_ptr() const;
  // The value of a one-element tensor; synchronises with the device. Any dtype converts to T.
  template <typename T> T item() const;
  Scalar item() const;
  // All elements as a flat vector in row-major order (copies to the CPU first).
  template <typename T> std::vector<T> to_vector() const;

  // ---- moving (guide §3.1) ----
  // A NEW tensor on `device`; this one is untouched. Already there: shares storage, no copy.
  // non_blocking: asynchronous when this tensor is in pinned host memory (or on the GPU).
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(DType dtype, bool copy = false) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false) const;
  Tensor cpu() const;
  Tensor cuda(int index = -1) const;
  // A copy in page-locked host memory (itself if it already is).
  Tensor pin_memory() const;
  Tensor contiguous() const;
  Tensor clone() const;
  // Copies src's values into this tensor (broadcasting src, converting dtype and device).
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor detach() const;

  // ---- views ----
  Tensor view(IntArrayRef sizes) const;      // one -1 allowed; must be compatible with the strides
  Tensor reshape(IntArrayRef sizes) const;   // a view where possible, else a copy
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor t() const;  // 2-D transpose (0-D and 1-D unchanged)
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor slice(std::int64_t dim, std::optional<std::int64_t> start = std::nullopt,
               std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor operator[](std::int64_t index) const { return select(0, index); }
  Tensor expand(IntArrayRef sizes) const;    // -1 keeps a size
  Tensor expand_as(const Tensor& other) const;
  Tensor view_as(const Tensor& other) const;
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  std::vector<Tensor> unbind(std::int64_t dim = 0) const;

  // ---- elementwise ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other);
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other) const;
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other);
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor& pow_(const Tensor& exponent);
  Tensor& pow_(const Scalar& exponent);
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;

  Tensor neg() const;
  Tensor& neg_();
  Tensor abs() const;
  Tensor& abs_();
  Tensor exp() const;
  Tensor& exp_();
  Tensor expm1() const;
  Tensor& expm1_();
  Tensor log() const;
  Tensor& log_();
  Tensor log1p() const;
  Tensor& log1p_();
  Tensor sqrt() const;
  Tensor& sqrt_();
  Tensor rsqrt() const;
  Tensor& rsqrt_();
  Tensor tanh() const;
  Tensor& tanh_();
  Tensor sigmoid() const;
  Tensor& sigmoid_();
  Tensor relu() const;
  Tensor& relu_();
  Tensor gelu(bool tanh_approximation = false) const;
  Tensor& gelu_(bool tanh_approximation = false);
  Tensor silu() const;
  Tensor& silu_();
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);

  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();

  // ---- reductions (dims may be negative; empty dims = all) ----
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(std::int64_t dim, bool keepdim = false) const;
  Tensor max() const;                                                        // over all elements
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;  // values, indices
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims, bool keepdim = false) const;
  Tensor argmax() const;                                                     // index into the flattened tensor
  Tensor argmax(std::int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(std::int64_t dim, bool keepdim = false) const;
  // correction = 1 is Bessel's (unbiased) estimate, as torch.var's default.
  Tensor var(IntArrayRef dims = {}, std::int64_t correction = 1, bool keepdim = false) const;
  Tensor std(IntArrayRef dims = {}, std::int64_t correction = 1, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(std::int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(std::int64_t dim, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2, IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor softmax(std::int64_t dim) const;
  Tensor log_softmax(std::int64_t dim) const;

  // ---- linear algebra ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;

  // ---- indexing ----
  Tensor index_select(std::int64_t dim, const Tensor& index) const;
  Tensor gather(std::int64_t dim, const Tensor& index) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(std::int64_t dim, const Tensor& index, const Tensor& src);
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(std::int64_t dim, const Tensor& index, const Tensor& src);

  // PyTorch-style text: values, then shape, dtype and device.
  std::string str() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& out, const Tensor& t);

// Operators: elementwise, with broadcasting and type promotion.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator!(const Tensor& a);
Tensor operator&&(const Tensor& a, const Tensor& b);
Tensor operator||(const Tensor& a, const Tensor& b);

// ---- template definitions ----
namespace detail {
void check_data_ptr_dtype(const Tensor& t, DType requested);
}

template <typename T> T* Tensor::data_ptr() const {
  detail::check_data_ptr_dtype(*this, dtype_of<T>());
  return static_cast<T*>(data_ptr());
}

template <typename T> T Tensor::item() const { return item().to<T>(); }

template <typename T> std::vector<T> Tensor::to_vector() const {
  Tensor flat = to(Device(DeviceType::CPU)).to(dtype_of<T>()).contiguous();
  const T* p = static_cast<const T*>(flat.data_ptr());
  return std::vector<T>(p, p + flat.numel());
}

}  // namespace hwaro
