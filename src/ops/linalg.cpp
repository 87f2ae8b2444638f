// Linear algebra: mm, bmm, addmm and matmul (torch.matmul's rules), on any backend with a Matmul kernel.
// Half and bfloat16 go to the backend as they are where it has a kernel for them (CUDA: cuBLAS with
// float32 accumulation); elsewhere they are multiplied in float32 and rounded back.
#include <algorithm>

#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {
namespace {

// True when a [.., rows, cols] view can be handed to GEMM as it is (row- or column-major).
bool gemm_compatible(const Tensor& t) {
  const std::int64_t d = t.dim();
  const std::int64_t rows = t.size(d - 2), cols = t.size(d - 1);
  const std::int64_t rs = t.stride(d - 2), cs = t.stride(d - 1);
  const bool row_major = (cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<std::int64_t>(cols, 1));
  const bool col_major = (rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<std::int64_t>(rows, 1));
  return row_major || col_major;
}

void check_matmul_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  HWARO_CHECK(a.dtype() == b.dtype(), op, ": expected both operands to have the same dtype, but got ", a.dtype(),
              " and ", b.dtype(), "; convert one with .to(dtype)");
  HWARO_CHECK(is_floating_point(a.dtype()), op, ": matrix multiplication needs a floating point dtype, got ",
              a.dtype(), "; convert with .to(hw::kFloat32)");
}

// out [B, M, N] = alpha * a [B, M, K] @ b [B, K, N] + beta * out. out must be contiguous and, when
// beta != 0, hold the addend.
void gemm_into(Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const DType dtype = a.dtype();
  const bool narrow_float =
      (dtype == kFloat16 || dtype == kBFloat16) && !ops::has_kernel(OpId::Matmul, dtype, out.device());
  const Tensor a32 = narrow_float ? a.to(kFloat32) : (gemm_compatible(a) ? a : a.contiguous());
  const Tensor b32 = narrow_float ? b.to(kFloat32) : (gemm_compatible(b) ? b : b.contiguous());
  Tensor target = narrow_float ? (beta != 0.0 ? out.to(kFloat32) : empty(out.sizes(), {.device = out.device()})) : out;
  KernelArgs args;
  args.tensors[0] = ops::view_of(target);
  args.tensors[1] = ops::view_of(a32);
  args.tensors[2] = ops::view_of(b32);
  args.num_tensors = 3;
  args.scalars[0] = alpha;
  args.scalars[1] = beta;
  ops::launch(OpId::Matmul, target.dtype(), target.device(), args);
  if (narrow_float) out.copy_(target);
  ops::bump_version(out);
}

std::string shape_text(const Tensor& t) {
  std::string s;
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (d > 0) s.push_back('x');
    s.append(std::to_string(t.size(d)));
  }
  return s;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  ops::check_same_device("mm", {{"self", a}, {"mat2", b}});
  HWARO_CHECK(a.dim() == 2, "mm: self must be a matrix (2-D), got ", a.dim(), "-D of shape ", a.sizes());
  HWARO_CHECK(b.dim() == 2, "mm: mat2 must be a matrix (2-D), got ", b.dim(), "-D of shape ", b.sizes());
  HWARO_CHECK(a.size(1) == b.size(0), "mm: mat1 and mat2 shapes cannot be multiplied (", shape_text(a), " and ",
              shape_text(b), ")");
  check_matmul_dtypes("mm", a, b);
  ops::GradScope grad({&a, &b});
  Tensor out = ops::new_tensor({a.size(0), b.size(1)}, a.dtype(), a.device());
  Tensor out3 = out.unsqueeze(0);
  gemm_into(out3, a.unsqueeze(0), b.unsqueeze(0), 1.0, 0.0);
  if (grad.active()) grad.record(out, {.kind = ops::GradOp::Mm, .inputs = {a, b}});
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  ops::check_same_device("bmm", {{"self", a}, {"mat2", b}});
  HWARO_CHECK(a.dim() == 3 && b.dim() == 3, "bmm: both operands must be 3-D (batch, rows, cols), got shapes ",
              a.sizes(), " and ", b.sizes());
  HWARO_CHECK(a.size(0) == b.size(0), "bmm: batch sizes differ: ", a.size(0), " and ", b.size(0));
  HWARO_CHECK(a.size(2) == b.size(1), "bmm: batch1 and batch2 shapes cannot be multiplied (", shape_text(a), " and ",
              shape_text(b), ")");
  check_matmul_dtypes("bmm", a, b);
  ops::GradScope grad({&a, &b});
  Tensor out = ops::new_tensor({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  gemm_into(out, a, b, 1.0, 0.0);
  if (grad.active()) grad.record(out, {.kind = ops::GradOp::Bmm, .inputs = {a, b}});
  return out;
}

Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  ops::check_same_device("addmm", {{"self", self}, {"mat1", a}, {"mat2", b}});
  HWARO_CHECK(a.dim() == 2 && b.dim() == 2, "addmm: mat1 and mat2 must be matrices, got shapes ", a.sizes(), " and ",
              b.sizes());
  HWARO_CHECK(a.size(1) == b.size(0), "addmm: mat1 and mat2 shapes cannot be multiplied (", shape_text(a), " and ",
              shape_text(b), ")");
  check_matmul_dtypes("addmm", a, b);
  HWARO_CHECK(self.dtype() == a.dtype(), "addmm: self has dtype ", self.dtype(), " but mat1 has ", a.dtype());
  const std::int64_t m = a.size(0), n = b.size(1);
  HWARO_CHECK(ops::broadcast_shapes(self.sizes(), {m, n}, "addmm").ref() == IntArrayRef({m, n}),
              "addmm: self of shape ", self.sizes(), " cannot be broadcast to the result's shape [", m, ", ", n, "]");
  ops::GradScope grad({&self, &a, &b});
  Tensor out = ops::new_tensor({m, n}, a.dtype(), a.device());
  const double beta_value = beta.to_double();
  if (beta_value != 0.0) out.copy_(self);
  Tensor out3 = out.unsqueeze(0);
  gemm_into(out3, a.unsqueeze(0), b.unsqueeze(0), alpha.to_double(), beta_value);
  if (grad.active()) {
    ops::GradCall call{.kind = ops::GradOp::Addmm, .inputs = {self, a, b}};
    call.reals[0] = beta_value;
    call.reals[1] = alpha.to_double();
    grad.record(out, std::move(call));
  }
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  ops::check_same_device("matmul", {{"self", a}, {"other", b}});
  HWARO_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: both arguments need at least 1 dimension, got ", a.dim(),
              "-D and ", b.dim(), "-D");
  if (a.dim() == 1 && b.dim() == 1) {  // dot product -> 0-D
    HWARO_CHECK(a.size(0) == b.size(0), "matmul: 1-D tensors of different sizes (", a.size(0), " and ", b.size(0),
                ") cannot be multiplied");
    return mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  }
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  if (a.dim() == 1 && b.dim() == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (a.dim() == 2 && b.dim() == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (b.dim() <= 2) {
    // [..., M, K] @ [K, N] (or [K]): fold a's batch into its rows, one GEMM.
    const Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    HWARO_CHECK(a.size(-1) == b2.size(0), "matmul: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (",
                a.size(-1), " != ", b2.size(0), ")");
    DimVector out_sizes(a.sizes());
    // The row count is the product of a's other dims, not -1, which an empty last dim would leave
    // undetermined ([3, 5, 0] @ [0, 4], as PyTorch's _matmul_impl notes).
    std::int64_t row_count = 1;
    for (std::int64_t d = 0; d + 1 < a.dim(); ++d) row_count *= a.size(d);
    const Tensor rows = a.reshape({row_count, a.size(-1)});
    Tensor out = mm(rows, b2);
    if (b.dim() == 1) {
      out_sizes.erase(out_sizes.size() - 1);
    } else {
      out_sizes[out_sizes.size() - 1] = b2.size(1);
    }
    return out.reshape(out_sizes);
  }
  // Batched with broadcasting: batch dims broadcast, then one bmm over the flattened batch.
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const std::int64_t m = a2.size(-2), k = a2.size(-1), n = b.size(-1);
  HWARO_CHECK(k == b.size(-2), "matmul: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (", k,
              " != ", b.size(-2), ")");
  const IntArrayRef a_batch(a2.sizes().data(), a2.sizes().size() - 2);
  const IntArrayRef b_batch(b.sizes().data(), b.sizes().size() - 2);
  const DimVector batch = ops::broadcast_shapes(a_batch, b_batch, "matmul");
  DimVector a_full(batch), b_full(batch);
  a_full.push_back(m);
  a_full.push_back(k);
  b_full.push_back(k);
  b_full.push_back(n);
  const std::int64_t batch_count = product(batch);
  const Tensor a3 = a2.expand(a_full).reshape({batch_count, m, k});
  const Tensor b3 = b.expand(b_full).reshape({batch_count, k, n});
  DimVector out_sizes(batch);
  if (a.dim() > 1) out_sizes.push_back(m);
  out_sizes.push_back(n);
  return bmm(a3, b3).reshape(out_sizes);
}

Tensor Tensor::matmul(const Tensor& other) const { return hwaro::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return hwaro::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return hwaro::bmm(*this, other); }

}  // namespace hwaro
