// What the CUDA kernels do beyond test_parity's small cases: sizes that take the vectorised
// elementwise path with a tail, reductions long enough for the chunked second pass, softmax rows
// of the one-block-per-row kernel, half and bfloat16 matmuls on cuBLAS and the TF32 switch,
// ScatterAdd's compare-and-swap path for 16-bit floats, the same random numbers as the CPU, and
// bad indices as IndexError. Each result is compared with a float64 loop over the inputs' values.
// Without a GPU the device cases skip; the TF32 switch is checked everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/convolution.h"
#include "support/test_support.h"

namespace hw = hwaro;
using hw::test::all_close;
using hw::test::values_of;

namespace {

const hw::Device kGpu("cuda:0");

#define SKIP_WITHOUT_GPU() \
  if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason()

TEST(CudaMatmulSwitch, Tf32IsOffByDefaultAndToggles) {
  EXPECT_FALSE(hw::cuda::matmul::allow_tf32());
  hw::cuda::matmul::set_allow_tf32(true);
  EXPECT_TRUE(hw::cuda::matmul::allow_tf32());
  hw::cuda::matmul::set_allow_tf32(false);
  EXPECT_FALSE(hw::cuda::matmul::allow_tf32());
}

// Row-major [m, k] @ [k, n] in float64 over the stored values.
std::vector<double> reference_mm(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m,
                                 std::int64_t k, std::int64_t n) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
  }
  return c;
}

TEST(CudaKernels, MatmulInEveryFloatDtypeAndWithTf32) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t m = 67, k = 129, n = 45;
  struct Case {
    hw::DType dtype;
    bool tf32;
    double tol;  // relative to sqrt(k) * |values| ~ 1 per element
  };
  for (const Case c : {Case{hw::kFloat32, false, 1e-5}, Case{hw::kFloat32, true, 5e-3}, Case{hw::kFloat64, false, 1e-12},
                       Case{hw::kFloat16, false, 5e-3}, Case{hw::kBFloat16, false, 3e-2}}) {
    SCOPED_TRACE(::testing::Message() << c.dtype << (c.tf32 ? " with TF32" : ""));
    const hw::Tensor a = hw::test::random_tensor({m, k}, c.dtype, rng, -1, 1);
    // The column-major operand is transposed on the GPU: to(kGpu) copies a transposed CPU tensor
    // into a contiguous (row-major) one, and cuBLAS would never see the transposed layout.
    const hw::Tensor b_gpu = hw::test::random_tensor({n, k}, c.dtype, rng, -1, 1).to(kGpu).t();
    ASSERT_FALSE(b_gpu.is_contiguous());
    const hw::Tensor b = b_gpu.cpu();
    hw::cuda::matmul::set_allow_tf32(c.tf32);
    const hw::Tensor out = hw::mm(a.to(kGpu), b_gpu).cpu();
    hw::cuda::matmul::set_allow_tf32(false);
    EXPECT_EQ(out.dtype(), c.dtype);
    const double scale = std::sqrt(static_cast<double>(k));
    EXPECT_TRUE(all_close(values_of(out), reference_mm(values_of(a), values_of(b), m, k, n), c.tol * 4, c.tol * scale));
  }
}

TEST(CudaKernels, ElementwiseVectorisedWithTailAndBroadcast) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 1001, cols = 1027;  // numel not a multiple of any vector width
  const hw::Tensor a = hw::test::random_tensor({rows, cols}, hw::kFloat32, rng);
  const hw::Tensor b = hw::test::random_tensor({cols}, hw::kFloat32, rng);
  const std::vector<double> va = values_of(a), vb = values_of(b);
  std::vector<double> sum(va.size()), product(va.size());
  for (std::size_t i = 0; i < va.size(); ++i) {
    sum[i] = va[i] + 2.0 * vb[i % cols];
    product[i] = va[i] * va[i];
  }
  const hw::Tensor ga = a.to(kGpu);
  EXPECT_TRUE(all_close(values_of(hw::add(ga, b.to(kGpu), 2.0).cpu()), sum, 1e-6, 1e-6));
  EXPECT_TRUE(all_close(values_of(hw::mul(ga, ga).cpu()), product, 1e-6, 1e-6));
  EXPECT_TRUE(all_close(values_of(ga.to(hw::kFloat64).cpu()), va, 0, 0));
}

TEST(CudaKernels, LongReductionsTakeTheSecondPass) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t r = 1 << 20, inner = 3;
  const hw::Tensor x = hw::test::random_tensor({r, inner}, hw::kFloat32, rng, -1, 1);
  const std::vector<double> v = values_of(x);
  std::vector<double> col_sum(inner, 0.0), col_max(inner, -INFINITY), col_argmax(inner, 0.0);
  for (std::int64_t i = 0; i < r; ++i) {
    for (std::int64_t j = 0; j < inner; ++j) {
      const double e = v[static_cast<std::size_t>(i * inner + j)];
      col_sum[j] += e;
      if (e > col_max[j]) {
        col_max[j] = e;
        col_argmax[j] = static_cast<double>(i);
      }
    }
  }
  const hw::Tensor g = x.to(kGpu);
  EXPECT_TRUE(all_close(values_of(hw::sum(g, {0}).cpu()), col_sum, 1e-4, 1e-2));
  const auto [values, indices] = g.max(0);
  EXPECT_TRUE(all_close(values_of(values.cpu()), col_max, 0, 0));
  EXPECT_TRUE(all_close(values_of(indices.cpu()), col_argmax, 0, 0));
  double total = 0;
  for (double e : v) total += e;
  EXPECT_TRUE(all_close(values_of(hw::sum(g).cpu()), {total}, 1e-4, 1e-2));
}

TEST(CudaKernels, SoftmaxOfLongRows) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 3, r = 5000;  // beyond one warp per row
  const hw::Tensor x = hw::test::random_tensor({rows, r}, hw::kFloat32, rng, -20, 20);
  const std::vector<double> v = values_of(x);
  std::vector<double> expected(v.size()), expected_log(v.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    double m = -INFINITY, s = 0;
    for (std::int64_t j = 0; j < r; ++j) m = std::max(m, v[i * r + j]);
    for (std::int64_t j = 0; j < r; ++j) s += std::exp(v[i * r + j] - m);
    for (std::int64_t j = 0; j < r; ++j) {
      expected[i * r + j] = std::exp(v[i * r + j] - m) / s;
      expected_log[i * r + j] = v[i * r + j] - m - std::log(s);
    }
  }
  EXPECT_TRUE(all_close(values_of(hw::softmax(x.to(kGpu), 1).cpu()), expected, 1e-5, 1e-9));
  EXPECT_TRUE(all_close(values_of(hw::log_softmax(x.to(kGpu), 1).cpu()), expected_log, 1e-5, 1e-5));
}

TEST(CudaKernels, ScatterAddOfHalfWithRepeatedTargets) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t targets = 4, sources = 64, cols = 3;
  // Small integers: every partial sum is exact in float16, so the order of the atomics cannot matter.
  const hw::Tensor self = hw::test::random_tensor({targets, cols}, hw::kInt32, rng, -4, 4).to(hw::kFloat16);
  const hw::Tensor src = hw::test::random_tensor({sources, cols}, hw::kInt32, rng, -4, 4).to(hw::kFloat16);
  const hw::Tensor index = hw::test::random_tensor({sources, cols}, hw::kInt64, rng, 0, targets - 1);
  std::vector<double> expected = values_of(self);
  const std::vector<double> vs = values_of(src), vi = values_of(index);
  for (std::int64_t i = 0; i < sources * cols; ++i) {
    expected[static_cast<std::size_t>(static_cast<std::int64_t>(vi[i]) * cols + i % cols)] += vs[i];
  }
  const hw::Tensor out = hw::scatter_add(self.to(kGpu), 0, index.to(kGpu), src.to(kGpu)).cpu();
  EXPECT_TRUE(all_close(values_of(out), expected, 0, 0));
}

TEST(CudaKernels, RandomNumbersEqualTheCpus) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  for (const hw::DType dtype : {hw::kFloat32, hw::kFloat64, hw::kBFloat16}) {
    hw::Generator cpu_gen(seed), gpu_gen(seed);
    const hw::Tensor on_cpu = hw::rand({37, 5}, {.dtype = dtype}, &cpu_gen);
    const hw::Tensor on_gpu = hw::rand({37, 5}, {.dtype = dtype, .device = kGpu}, &gpu_gen).cpu();
    EXPECT_TRUE(all_close(values_of(on_gpu), values_of(on_cpu), 0, 0)) << dtype;
  }
  hw::Generator cpu_gen(seed), gpu_gen(seed);
  const hw::Tensor on_cpu = hw::randint(-5, 1000, {101}, {.dtype = hw::kInt64}, &cpu_gen);
  const hw::Tensor on_gpu = hw::randint(-5, 1000, {101}, {.dtype = hw::kInt64, .device = kGpu}, &gpu_gen).cpu();
  EXPECT_TRUE(all_close(values_of(on_gpu), values_of(on_cpu), 0, 0));
  const hw::Tensor normal_cpu = hw::randn({64}, {}, &cpu_gen);
  const hw::Tensor normal_gpu = hw::randn({64}, {.device = kGpu}, &gpu_gen).cpu();
  EXPECT_TRUE(all_close(values_of(normal_gpu), values_of(normal_cpu), 1e-5, 1e-5));  // libm vs CUDA's log/cos
}

TEST(CudaKernels, BadIndicesAreIndexErrors) {
  SKIP_WITHOUT_GPU();
  const hw::Tensor x = hw::zeros({4, 3}, {.device = kGpu});
  const hw::Tensor bad = hw::tensor(std::vector<std::int64_t>{0, 4}, {2}).to(kGpu);
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { (void)hw::index_select(x, 0, bad); },
                                                    "index 4 is out of bounds for dimension 0 with size 4"));
}

// conv2d through cuDNN (where the build found it) in every float dtype, with stride, padding,
// dilation, groups and a bias: the output and the gradients of input, weight and bias against
// the same convolution in float64 on the CPU, over the same (dtype-rounded) values.
TEST(CudaKernels, Conv2dForwardAndBackwardInEveryFloatDtype) {
  SKIP_WITHOUT_GPU();
  namespace F = hw::nn::functional;
  if (!hw::build_info().cudnn_version.empty()) {
    EXPECT_TRUE(hwaro::ops::has_direct_conv2d(hw::zeros({1, 1, 1, 1}, {.device = kGpu})))
        << "built with cuDNN " << hw::build_info().cudnn_version << " but conv2d on CUDA is not the direct path";
  }
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  struct Case {
    hw::DType dtype;
    double tol;  // relative to the ~sqrt(terms) magnitude of a sum of products of values in [-1, 1]
  };
  // Returns the output and the three gradients of one conv2d on `device` in `dtype`.
  const auto run = [](const std::vector<hw::Tensor>& in, const hw::Device& device, hw::DType dtype) {
    std::vector<hw::Tensor> leaves;
    for (std::size_t i = 0; i < 3; ++i) leaves.push_back(in[i].to(device).to(dtype).set_requires_grad(true));
    const hw::Tensor y = F::conv2d(leaves[0], leaves[1], leaves[2], {2, 1}, {1, 2}, {1, 2}, 2);
    (y * in[3].to(device).to(dtype)).sum().backward();
    return std::vector<hw::Tensor>{y.cpu(), leaves[0].grad().cpu(), leaves[1].grad().cpu(), leaves[2].grad().cpu()};
  };
  for (const Case c : {Case{hw::kFloat32, 1e-5}, Case{hw::kFloat64, 1e-12}, Case{hw::kFloat16, 2e-3},
                       Case{hw::kBFloat16, 1.6e-2}}) {
    SCOPED_TRACE(::testing::Message() << c.dtype);
    // x [3, 4, 13, 11], weight [6, 4 / 2, 3, 3]: output [3, 6, 7, 11]; values rounded to the dtype.
    std::vector<hw::Tensor> in;
    using Sizes = std::vector<std::int64_t>;
    for (const Sizes& sizes : {Sizes{3, 4, 13, 11}, Sizes{6, 2, 3, 3}, Sizes{6}, Sizes{3, 6, 7, 11}}) {
      in.push_back(hw::test::random_tensor(sizes, c.dtype, rng, -1, 1));
    }
    const std::vector<hw::Tensor> got = run(in, kGpu, c.dtype), want = run(in, hw::Device("cpu"), hw::kFloat64);
    const char* names[] = {"output", "input's gradient", "weight's gradient", "bias's gradient"};
    const double scale = std::sqrt(3.0 * 7 * 11);  // the weight gradient's sum is the longest
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(names[i]);
      EXPECT_EQ(got[i].dtype(), c.dtype);
      EXPECT_EQ(got[i].sizes(), want[i].sizes());
      EXPECT_TRUE(all_close(values_of(got[i]), values_of(want[i]), c.tol * 4, c.tol * scale));
    }
  }
}

}  // namespace
