// Matmul on the CPU: batched GEMM through OpenBLAS (cblas_sgemm / cblas_dgemm).
// out [B, M, N] = alpha * a [B, M, K] @ b [B, K, N] + beta * out; out is contiguous.
// a and b may each be row-major or transposed in their last two dims (the op entry point
// guarantees one of the two), which BLAS reads directly: x.t() @ y costs no copy.
#include <cblas.h>

#include <algorithm>

#include "cpu/blas_threads.h"
#include "cpu/kernel_families.h"
#include "cpu/thread_pool.h"
#include "hwaro/errors.h"

namespace hwaro::cpu {
namespace {

struct GemmOperand {
  CBLAS_TRANSPOSE trans;
  int ld;
};

// The layout of a [rows, cols] matrix view with strides (row_stride, col_stride), as BLAS wants it.
// A dimension of size 1 is never stepped, so its stride does not matter and ld only has to be valid.
GemmOperand operand(std::int64_t rows, std::int64_t cols, std::int64_t row_stride, std::int64_t col_stride) {
  if (col_stride == 1 || cols == 1) {
    const std::int64_t ld = rows == 1 ? std::max<std::int64_t>(cols, 1) : row_stride;
    if (ld >= std::max<std::int64_t>(cols, 1)) return {CblasNoTrans, static_cast<int>(ld)};
  }
  const std::int64_t ld = cols == 1 ? std::max<std::int64_t>(rows, 1) : col_stride;
  HWARO_ASSERT(row_stride == 1 || rows == 1, "matmul operand is neither row- nor column-major");
  HWARO_ASSERT(ld >= std::max<std::int64_t>(rows, 1), "matmul operand leading dimension too small");
  return {CblasTrans, static_cast<int>(ld)};
}

template <typename T> void gemm(const GemmOperand& a, const GemmOperand& b, int m, int n, int k, T alpha,
                                const T* pa, const T* pb, T beta, T* pc) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, m, n, k, alpha, pa, a.ld, pb, b.ld, beta, pc, std::max(n, 1));
  } else {
    cblas_dgemm(CblasRowMajor, a.trans, b.trans, m, n, k, alpha, pa, a.ld, pb, b.ld, beta, pc, std::max(n, 1));
  }
}

// Products below this many multiply-adds (about 30 us on one core) run on the calling thread
// alone. OpenBLAS would split them over its own threads, which then spin (sched_yield) for a
// long while after each call, on the cores hwaro's pool and oneDNN need next: in a CNN step on
// 2 cores that spinning took 18% of the CPU time and made the step 13% slower.
constexpr std::int64_t kThreadedGemmMacs = std::int64_t{1} << 22;

// OpenBLAS on one thread while it lives, then back to hwaro's thread count.
class SingleThreadedBlas {
 public:
  explicit SingleThreadedBlas(bool active) : active_(active && get_num_threads() > 1) {
    if (active_) set_blas_threads(1);
  }
  ~SingleThreadedBlas() {
    if (active_) set_blas_threads(get_num_threads());
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  bool active_;
};

template <typename T> struct MatmulKernel {
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& a = args[1];
    const TensorView& b = args[2];
    const std::int64_t batch = out.sizes[0], m = out.sizes[1], n = out.sizes[2], k = a.sizes[2];
    const T alpha = static_cast<T>(args.scalars[0]);
    const T beta = static_cast<T>(args.scalars[1]);
    if (batch == 0 || m == 0 || n == 0) return;
    T* pc = out.ptr<T>();
    if (k == 0) {  // an empty sum: out = beta * out (beta 0 overwrites, NaNs included, as BLAS does)
      for (std::int64_t i = 0; i < batch * m * n; ++i) pc[i] = beta == T(0) ? T(0) : beta * pc[i];
      return;
    }
    HWARO_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX, "matmul: dimensions beyond 2^31 are not supported");
    const GemmOperand ga = operand(m, k, a.strides[1], a.strides[2]);
    const GemmOperand gb = operand(k, n, b.strides[1], b.strides[2]);
    const SingleThreadedBlas small(m * n * k < kThreadedGemmMacs);
    for (std::int64_t i = 0; i < batch; ++i) {
      gemm<T>(ga, gb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha,
              a.ptr<T>() + i * a.strides[0], b.ptr<T>() + i * b.strides[0], beta, pc + i * m * n);
    }
  }
};

}  // namespace

void register_matmul_kernels(KernelTable& table) { table.set_types<MatmulKernel, float, double>(OpId::Matmul); }

}  // namespace hwaro::cpu
