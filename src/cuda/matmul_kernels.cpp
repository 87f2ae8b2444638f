// Matmul on CUDA through cuBLAS (cublasGemmStridedBatchedEx), one call per batched product:
// out [B, M, N] = alpha * a [B, M, K] @ b [B, K, N] + beta * out; out is contiguous, and a and b
// are each row-major or transposed in their last two dims (the op guarantees one of the two).
//
// cuBLAS is column-major; a row-major C = A B is the column-major C^T = B^T A^T, so the call
// passes b first and a second with M and N swapped, and a row-major operand needs no transpose.
// Float32 runs in float32 unless hw::cuda::matmul::set_allow_tf32(true); float16 and bfloat16
// accumulate in float32; float64 in float64.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/kernel_families.h"
#include "cuda/kernel_launch.h"
#include "cuda/thread_handles.h"
#include "hwaro/cuda.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {
namespace {

const char* cublas_status_text(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED (is the driver working?)";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED (out of GPU memory)";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH (this GPU lacks the feature)";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "unknown cuBLAS status";
  }
}

#define HWARO_CUBLAS_CHECK(call)                                                                         \
  do {                                                                                                   \
    const cublasStatus_t hwaro_cublas_status = (call);                                                   \
    if (HWARO_UNLIKELY(hwaro_cublas_status != CUBLAS_STATUS_SUCCESS)) {                                  \
      throw ::hwaro::Error(::hwaro::detail::str_cat("cuBLAS error at ", __FILE__, ":", __LINE__, ": ", #call, \
                                                    " failed: ", cublas_status_text(hwaro_cublas_status)));   \
    }                                                                                                    \
  } while (false)

struct Cublas {
  using Handle = cublasHandle_t;
  static constexpr const char* kName = "cuBLAS";
  static void create(Handle* h) { HWARO_CUBLAS_CHECK(cublasCreate(h)); }
  static void destroy(Handle h) { cublasDestroy(h); }
  static void set_stream(Handle h, cudaStream_t stream) { HWARO_CUBLAS_CHECK(cublasSetStream(h, stream)); }
};

struct GemmOperand {
  cublasOperation_t op;  // for the column-major call (see the file comment)
  std::int64_t ld;
};

// A [rows, cols] matrix view with strides (row_stride, col_stride). Row-major is column-major's
// transpose, which the swapped call wants as it is (CUBLAS_OP_N); column-major needs CUBLAS_OP_T.
// A dimension of size 1 is never stepped, so its stride does not matter and ld only has to be valid.
GemmOperand operand(std::int64_t rows, std::int64_t cols, std::int64_t row_stride, std::int64_t col_stride) {
  if (col_stride == 1 || cols == 1) {
    const std::int64_t ld = rows == 1 ? std::max<std::int64_t>(cols, 1) : row_stride;
    if (ld >= std::max<std::int64_t>(cols, 1)) return {CUBLAS_OP_N, ld};
  }
  const std::int64_t ld = cols == 1 ? std::max<std::int64_t>(rows, 1) : col_stride;
  HWARO_ASSERT(row_stride == 1 || rows == 1, "matmul operand is neither row- nor column-major");
  HWARO_ASSERT(ld >= std::max<std::int64_t>(rows, 1), "matmul operand leading dimension too small");
  return {CUBLAS_OP_T, ld};
}

template <typename T> struct GemmTypes;
template <> struct GemmTypes<float> {
  static constexpr cudaDataType_t kData = CUDA_R_32F;
  using Scale = float;
  static cublasComputeType_t compute() {
    return matmul::allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  }
};
template <> struct GemmTypes<double> {
  static constexpr cudaDataType_t kData = CUDA_R_64F;
  using Scale = double;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_64F; }
};
template <> struct GemmTypes<Half> {
  static constexpr cudaDataType_t kData = CUDA_R_16F;
  using Scale = float;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_32F; }
};
template <> struct GemmTypes<BFloat16> {
  static constexpr cudaDataType_t kData = CUDA_R_16BF;
  using Scale = float;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_32F; }
};

// k == 0: an empty sum, so out = beta * out (beta 0 overwrites, NaNs included, as BLAS does).
template <typename T> void scale_output(const KernelArgs& args, cublasHandle_t handle, std::int64_t count, double beta) {
  void* out = args[0].data;
  if (beta == 0.0) {
    HWARO_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<std::size_t>(count) * sizeof(T), stream_of(args)));
    return;
  }
  using Types = GemmTypes<T>;
  const typename Types::Scale b = static_cast<typename Types::Scale>(beta);
  constexpr cudaDataType_t kScaleType = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
  HWARO_CUBLAS_CHECK(cublasScalEx_64(handle, count, &b, kScaleType, out, Types::kData, 1, kScaleType));
}

template <typename T> struct MatmulKernel {
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& a = args[1];
    const TensorView& b = args[2];
    const std::int64_t batch = out.sizes[0], m = out.sizes[1], n = out.sizes[2], k = a.sizes[2];
    if (batch == 0 || m == 0 || n == 0) return;
    set_device_of(args);
    cublasHandle_t handle = handle_for<Cublas>(args);
    if (k == 0) {
      scale_output<T>(args, handle, batch * m * n, args.scalars[1]);
      return;
    }
    HWARO_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && batch <= INT32_MAX,
                "matmul on CUDA: dimensions beyond 2^31 are not supported (got batch ", batch, ", M ", m, ", N ", n,
                ", K ", k, "); split the product");
    using Types = GemmTypes<T>;
    const typename Types::Scale alpha = static_cast<typename Types::Scale>(args.scalars[0]);
    const typename Types::Scale beta = static_cast<typename Types::Scale>(args.scalars[1]);
    const GemmOperand ga = operand(m, k, a.strides[1], a.strides[2]);
    const GemmOperand gb = operand(k, n, b.strides[1], b.strides[2]);
    HWARO_CHECK(ga.ld <= INT32_MAX && gb.ld <= INT32_MAX, "matmul on CUDA: a leading dimension beyond 2^31 (",
                std::max(ga.ld, gb.ld), ") is not supported; make the operand contiguous");
    // Column-major call: (N x M) = op(b) (N x K) * op(a) (K x M).
    HWARO_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        handle, gb.op, ga.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b.data,
        Types::kData, static_cast<int>(gb.ld), b.strides[0], a.data, Types::kData, static_cast<int>(ga.ld),
        a.strides[0], &beta, out.data, Types::kData, static_cast<int>(n), m * n, static_cast<int>(batch),
        Types::compute(), CUBLAS_GEMM_DEFAULT));
  }
};

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  table.set_types<MatmulKernel, float, double, Half, BFloat16>(OpId::Matmul);
}

}  // namespace hwaro::cuda
