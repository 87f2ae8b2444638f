#pragma once
// Free functions: creation, elementwise, reductions, linear algebra and data
// movement. Every op checks its arguments' devices (hw::DeviceMismatchError,
// Dev Tip 1), dtypes and shapes before it runs.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

#include "hwaro/generator.h"
#include "hwaro/tensor.h"

namespace hwaro {

// ---- creation ----
Tensor empty(IntArrayRef sizes, const TensorOptions& options = {});
Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {});
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, const TensorOptions& options = {});
Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options = {});
Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, const TensorOptions& options = {});
// Uniform on [0, 1).
Tensor rand(IntArrayRef sizes, const TensorOptions& options = {}, Generator* generator = nullptr);
Tensor randn(IntArrayRef sizes, const TensorOptions& options = {}, Generator* generator = nullptr);
// Integers in [low, high); int64 by default.
Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef sizes, const TensorOptions& options = {},
               Generator* generator = nullptr);
Tensor randperm(std::int64_t n, const TensorOptions& options = {}, Generator* generator = nullptr);

Tensor empty_like(const Tensor& t, const TensorOptions& options);
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor zeros_like(const Tensor& t, const TensorOptions& options);
Tensor ones_like(const Tensor& t);
Tensor ones_like(const Tensor& t, const TensorOptions& options);
Tensor full_like(const Tensor& t, const Scalar& value);
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);

// From values, as torch.tensor: the dtype follows the C++ type unless options say otherwise.
template <typename T> Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {});
template <typename T> Tensor tensor(std::initializer_list<T> values, const TensorOptions& options = {}) {
  return tensor(std::vector<T>(values), options);
}
// 2-D from nested lists: hw::tensor({{1.f, 2.f}, {3.f, 4.f}}).
template <typename T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, const TensorOptions& options = {});
// Reshaped: hw::tensor(values, {2, 3}).
template <typename T> Tensor tensor(const std::vector<T>& values, IntArrayRef sizes, const TensorOptions& options = {});
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});

// Wraps memory the caller owns (no copy). The memory must outlive every tensor viewing it;
// `deleter`, if given, is called with `data` when the last one goes.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});

// ---- elementwise (also as Tensor methods and operators) ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor pow(const Scalar& base, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor expm1(const Tensor& x);  // e^x - 1, exact near 0 where exp(x) - 1 cancels
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);  // log(1 + x), exact near 0 where 1 + x rounds x away
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
// True where |a - b| <= atol + rtol * |b| (NaNs unequal), and its all-elements form.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
// Shapes and values equal.
bool equal(const Tensor& a, const Tensor& b);

// ---- reductions ----
Tensor sum(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);

// ---- linear algebra (OpenBLAS on the CPU) ----
Tensor mm(const Tensor& a, const Tensor& b);                      // [n, k] @ [k, m]
Tensor bmm(const Tensor& a, const Tensor& b);                     // [B, n, k] @ [B, k, m]
Tensor matmul(const Tensor& a, const Tensor& b);                  // torch.matmul: 1-D, 2-D, batched, broadcast
// beta * self + alpha * (a @ b)
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);

// ---- 2-D sliding windows (the primitives of convolution and pooling; ATen's names and order) ----
// kernel_size, dilation, padding and stride each take one value (both axes) or two (rows, cols).
// x [N, C, H, W] -> columns [N, C*kh*kw, oh*ow] (torch.nn.functional.unfold): column l holds the
// window of output position l, channel-major then tap by tap; padding reads as 0.
Tensor im2col(const Tensor& x, IntArrayRef kernel_size, IntArrayRef dilation = {1}, IntArrayRef padding = {0},
              IntArrayRef stride = {1});
// The adjoint of im2col (torch.nn.functional.fold): columns [N, C*kh*kw, L] summed back into
// [N, C, output_size[0], output_size[1]], every element receiving each window entry that read it.
Tensor col2im(const Tensor& cols, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = {1},
              IntArrayRef padding = {0}, IntArrayRef stride = {1});
// Max over each window of x [N, C, H, W] -> (values [N, C, oh, ow], indices int64 into H*W).
// stride empty: the kernel size. Padding (at most half the kernel) never wins. ceil_mode rounds
// oh and ow up, so that a last, partial window covers what floor division leaves out.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);

// ---- data movement ----
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);
// int64 class indices -> int64 one-hot rows; num_classes -1 = max + 1.
Tensor one_hot(const Tensor& indices, std::int64_t num_classes = -1);

// ---- threads of the CPU backend (shared by hwaro's own loops and OpenBLAS) ----
// By default one per CPU the process may run on (its affinity mask: taskset, a container's cpuset).
void set_num_threads(int n);
int get_num_threads();

}  // namespace hwaro
