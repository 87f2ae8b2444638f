// mm, bmm, addmm, matmul against a float64 triple loop on fresh random inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.h"

namespace hw = hwaro;
using hw::test::all_close;
using hw::test::values_of;

namespace {

// [B, M, K] @ [B, K, N] in double, from the values of the (possibly non-contiguous) inputs.
std::vector<double> reference_bmm(const hw::Tensor& a, const hw::Tensor& b) {
  const std::int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  const std::vector<double> av = values_of(a), bv = values_of(b);
  std::vector<double> out(static_cast<std::size_t>(batch * m * n), 0.0);
  for (std::int64_t p = 0; p < batch; ++p)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (std::int64_t q = 0; q < k; ++q) acc += av[(p * m + i) * k + q] * bv[(p * k + q) * n + j];
        out[(p * m + i) * n + j] = acc;
      }
  return out;
}

// Tolerances for a K-long dot product of values in [-1, 1] computed in `dtype`. Float32 and
// float64 accumulate in their own precision: rounding grows like sqrt(K) units in the last place.
// The 16-bit types accumulate in float32 (OpenBLAS and cuBLAS alike) and round the result once
// to 8 or 11 significant bits: one unit of that rounding relative to the result, plus an absolute
// term for results that cancel to near zero, small enough that an all-zero result fails (checked
// in MmMatchesReferenceForDtypesAndShapes).
struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance(hw::DType dtype, std::int64_t k) {
  const double root_k = std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1)));
  if (dtype == hw::kFloat64 || dtype == hw::kFloat32) {
    const double eps = dtype == hw::kFloat64 ? 1e-15 : 1.2e-7;
    return {32.0 * eps * root_k, 32.0 * eps * root_k};
  }
  const double result_eps = dtype == hw::kBFloat16 ? 1.0 / 256 : 1.0 / 2048;  // 2^-8, 2^-11
  return {result_eps, result_eps * root_k / 4.0};
}

class LinalgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = hw::test::fresh_seed();
    rng_.seed(seed_);
  }
  hw::Tensor random(hw::IntArrayRef sizes, hw::DType dtype = hw::kFloat32) {
    return hw::test::random_tensor(sizes, dtype, rng_, -1.0, 1.0);
  }
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

TEST_F(LinalgTest, MmMatchesReferenceForDtypesAndShapes) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  for (hw::DType dtype : {hw::kFloat32, hw::kFloat64, hw::kBFloat16, hw::kFloat16}) {
    for (auto [m, k, n] : {std::tuple{1, 1, 1}, {3, 5, 7}, {64, 33, 17}, {1, 100, 1}, {130, 70, 90}}) {
      SCOPED_TRACE(std::string(hw::dtype_name(dtype)) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                   std::to_string(n));
      const hw::Tensor a = random({m, k}, dtype), b = random({k, n}, dtype);
      const hw::Tensor c = hw::mm(a, b);
      EXPECT_EQ(c.dtype(), dtype);
      EXPECT_EQ(c.sizes(), hw::IntArrayRef({m, n}));
      const auto [rtol, atol] = tolerance(dtype, k);
      const std::vector<double> expected = reference_bmm(a.unsqueeze(0), b.unsqueeze(0));
      EXPECT_TRUE(all_close(values_of(c), expected, rtol, atol));
      if (m * n >= 64) {  // the tolerance can fail: on this many outputs, zeros are far outside it
        EXPECT_FALSE(all_close(std::vector<double>(expected.size(), 0.0), expected, rtol, atol));
      }
    }
  }
}

TEST_F(LinalgTest, TransposedAndNonContiguousOperands) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const hw::Tensor at = random({40, 30});  // used as at.t(): [30, 40], column-major, no copy needed
  const hw::Tensor b = random({40, 20});
  const hw::Tensor bt = random({50, 40});  // bt.t(): [40, 50]
  const auto [rtol, atol] = tolerance(hw::kFloat32, 40);
  EXPECT_TRUE(all_close(values_of(hw::mm(at.t(), b)), reference_bmm(at.t().unsqueeze(0), b.unsqueeze(0)), rtol, atol));
  EXPECT_TRUE(all_close(values_of(at.t().mm(bt.t())), reference_bmm(at.t().unsqueeze(0), bt.t().unsqueeze(0)), rtol, atol));
  // Strided in both dims: neither row- nor column-major, so the op makes a contiguous copy.
  const hw::Tensor strided = hw::test::non_contiguous_copy(random({30, 40})).slice(0, 0, std::nullopt, 2);
  EXPECT_TRUE(all_close(values_of(hw::mm(strided, b)), reference_bmm(strided.unsqueeze(0), b.unsqueeze(0)), rtol, atol));
}

TEST_F(LinalgTest, BmmAndBatchedMatmulWithBroadcast) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const hw::Tensor a = random({4, 6, 5}), b = random({4, 5, 3});
  const auto [rtol, atol] = tolerance(hw::kFloat32, 5);
  EXPECT_TRUE(all_close(values_of(hw::bmm(a, b)), reference_bmm(a, b), rtol, atol));
  // [2, 1, 3, 4] @ [5, 4, 6] -> [2, 5, 3, 6]
  const hw::Tensor x = random({2, 1, 3, 4}), y = random({5, 4, 6});
  const hw::Tensor z = hw::matmul(x, y);
  EXPECT_EQ(z.sizes(), hw::IntArrayRef({2, 5, 3, 6}));
  const hw::Tensor xe = x.expand({2, 5, 3, 4}).reshape({10, 3, 4});
  const hw::Tensor ye = y.expand({2, 5, 4, 6}).reshape({10, 4, 6});
  EXPECT_TRUE(all_close(values_of(z), reference_bmm(xe, ye), rtol, atol));
}

TEST_F(LinalgTest, MatmulOneDimensionalCases) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const hw::Tensor v = random({7}), w = random({7}), m = random({7, 3}), mt = random({3, 7});
  const auto [rtol, atol] = tolerance(hw::kFloat32, 7);
  const hw::Tensor dot = hw::matmul(v, w);
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_TRUE(all_close(values_of(dot), reference_bmm(v.view({1, 1, 7}), w.view({1, 7, 1})), rtol, atol));
  const hw::Tensor vm = hw::matmul(v, m);
  EXPECT_EQ(vm.sizes(), hw::IntArrayRef({3}));
  EXPECT_TRUE(all_close(values_of(vm), reference_bmm(v.view({1, 1, 7}), m.unsqueeze(0)), rtol, atol));
  const hw::Tensor mv = hw::matmul(mt, v);
  EXPECT_EQ(mv.sizes(), hw::IntArrayRef({3}));
  EXPECT_TRUE(all_close(values_of(mv), reference_bmm(mt.unsqueeze(0), v.view({1, 7, 1})), rtol, atol));
  // [2, 4, 7] @ [7]: batched matrix-vector -> [2, 4]
  const hw::Tensor batch = random({2, 4, 7});
  const hw::Tensor bv = hw::matmul(batch, v);
  EXPECT_EQ(bv.sizes(), hw::IntArrayRef({2, 4}));
  EXPECT_TRUE(all_close(values_of(bv), reference_bmm(batch.reshape({1, 8, 7}), v.view({1, 7, 1})), rtol, atol));
  // [3, 2, 7] @ [7, 5]: the folded single-GEMM path
  const hw::Tensor folded_a = random({3, 2, 7}), folded_b = random({7, 5});
  EXPECT_TRUE(all_close(values_of(hw::matmul(folded_a, folded_b)),
                        reference_bmm(folded_a.reshape({1, 6, 7}), folded_b.unsqueeze(0)), rtol, atol));
}

TEST_F(LinalgTest, AddmmWithBroadcastSelfAndScalars) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const hw::Tensor bias = random({5}), a = random({4, 6}), b = random({6, 5});
  const hw::Tensor out = hw::addmm(bias, a, b, 0.5, 2.0);
  std::vector<double> expected = reference_bmm(a.unsqueeze(0), b.unsqueeze(0));
  const std::vector<double> bv = values_of(bias);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = 0.5 * bv[i % 5] + 2.0 * expected[i];
  const auto [rtol, atol] = tolerance(hw::kFloat32, 6);
  EXPECT_TRUE(all_close(values_of(out), expected, rtol, atol));
  // beta = 0 ignores self entirely, NaNs included.
  const hw::Tensor nan_self = hw::full({4, 5}, std::nan(""));
  EXPECT_TRUE(all_close(values_of(hw::addmm(nan_self, a, b, 0.0, 1.0)), reference_bmm(a.unsqueeze(0), b.unsqueeze(0)),
                        rtol, atol));
}

TEST_F(LinalgTest, BatchedTransposedAndPermutedOperandsAcrossDtypes) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  for (hw::DType dtype : {hw::kFloat32, hw::kFloat64, hw::kBFloat16}) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    const auto [rtol, atol] = tolerance(dtype, 9);
    // a.transpose(1, 2): each batch matrix column-major; b.permute: batch stride smaller than a row's.
    const hw::Tensor a = random({3, 9, 4}, dtype).transpose(1, 2);  // [3, 4, 9]
    const hw::Tensor b = random({9, 3, 5}, dtype).permute({1, 0, 2});  // [3, 9, 5]
    EXPECT_TRUE(all_close(values_of(hw::bmm(a, b)), reference_bmm(a, b), rtol, atol));
    EXPECT_TRUE(all_close(values_of(hw::matmul(a, b)), reference_bmm(a, b), rtol, atol));
    // addmm with self broadcast along columns ([M, 1]) in this dtype.
    const hw::Tensor self = random({4, 1}, dtype), m1 = random({4, 9}, dtype), m2 = random({5, 9}, dtype).t();
    std::vector<double> expected = reference_bmm(m1.unsqueeze(0), m2.unsqueeze(0));
    const std::vector<double> sv = values_of(self);
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = -1.5 * sv[i / 5] + 0.25 * expected[i];
    const hw::Tensor out = hw::addmm(self, m1, m2, -1.5, 0.25);
    EXPECT_EQ(out.dtype(), dtype);
    EXPECT_TRUE(all_close(values_of(out), expected, 2 * rtol, 2 * atol));
  }
}

TEST_F(LinalgTest, ZeroSizeShapes) {
  const hw::Tensor k0 = hw::mm(hw::ones({3, 0}), hw::ones({0, 4}));
  EXPECT_EQ(k0.sizes(), hw::IntArrayRef({3, 4}));
  EXPECT_TRUE(all_close(values_of(k0), std::vector<double>(12, 0.0), 0, 0));
  EXPECT_EQ(hw::mm(hw::ones({0, 3}), hw::ones({3, 4})).sizes(), hw::IntArrayRef({0, 4}));
  EXPECT_EQ(hw::bmm(hw::ones({0, 2, 3}), hw::ones({0, 3, 4})).sizes(), hw::IntArrayRef({0, 2, 4}));
  // A batched operand with an empty last dim, as PyTorch's [3, 5, 0] @ [0, 0]: zeros, not a reshape error.
  const hw::Tensor batched_k0 = hw::matmul(hw::ones({2, 3, 0}), hw::ones({0, 4}));
  EXPECT_EQ(batched_k0.sizes(), hw::IntArrayRef({2, 3, 4}));
  EXPECT_TRUE(all_close(values_of(batched_k0), std::vector<double>(24, 0.0), 0, 0));
  EXPECT_EQ(hw::matmul(hw::ones({2, 3, 0}), hw::ones({0})).sizes(), hw::IntArrayRef({2, 3}));
}

TEST(LinalgErrors, ShapesDtypesAndDevices) {
  using hw::test::throws_with;
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::mm(hw::ones({64, 784}), hw::ones({128, 10})); },
                                     "mm: mat1 and mat2 shapes cannot be multiplied (64x784 and 128x10)"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::mm(hw::ones({2}), hw::ones({2, 2})); }, "mm: self must be a matrix"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::bmm(hw::ones({2, 2, 3}), hw::ones({3, 3, 2})); }, "bmm: batch sizes differ"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::mm(hw::ones({2, 2}), hw::ones({2, 2}, {.dtype = hw::kFloat64})); },
                                     "same dtype, but got float32 and float64"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::mm(hw::ones({2, 2}, {.dtype = hw::kInt64}), hw::ones({2, 2}, {.dtype = hw::kInt64})); },
                                     "needs a floating point dtype"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::matmul(hw::ones({2, 3, 4}), hw::ones({5, 6})); }, "cannot be multiplied"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::matmul(hw::ones({3}), hw::ones({4})); }, "1-D tensors of different sizes"));
  EXPECT_TRUE(throws_with<hw::Error>([] { hw::addmm(hw::ones({3}), hw::ones({2, 2}), hw::ones({2, 2})); },
                                     "cannot be broadcast"));
  const hw::Device other = hw::test::other_device();
  const hw::Tensor here = hw::ones({2, 2}), there = hw::ones({2, 2}, {.device = other});
  const std::string prefix = "Expected all tensors to be on the same device, but found at least two devices, cpu and test:0! ";
  EXPECT_TRUE(throws_with<hw::DeviceMismatchError>([&] { hw::mm(here, there); }, prefix + "(when checking argument 'mat2' of mm)"));
  EXPECT_TRUE(throws_with<hw::DeviceMismatchError>([&] { hw::bmm(here.unsqueeze(0), there.unsqueeze(0)); },
                                                   prefix + "(when checking argument 'mat2' of bmm)"));
  EXPECT_TRUE(throws_with<hw::DeviceMismatchError>([&] { hw::matmul(here, there); },
                                                   prefix + "(when checking argument 'other' of matmul)"));
  EXPECT_TRUE(throws_with<hw::DeviceMismatchError>([&] { hw::addmm(here, here, there); },
                                                   prefix + "(when checking argument 'mat2' of addmm)"));
  EXPECT_TRUE(throws_with<hw::DeviceMismatchError>([&] { hw::addmm(there, here, here); },
                                                   "test:0 and cpu! (when checking argument 'mat1' of addmm)"));
}

TEST_F(LinalgTest, RunsOnTheTestDeviceWithTheSameResult) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const hw::Tensor a = random({5, 4}), b = random({4, 3});
  const hw::Device other = hw::test::other_device();
  const hw::Tensor remote = hw::mm(a.to(other), b.to(other));
  EXPECT_EQ(remote.device(), other);
  EXPECT_TRUE(all_close(values_of(remote), values_of(hw::mm(a, b)), 0, 0));
}

}  // namespace
