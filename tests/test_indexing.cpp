// index_select, gather, scatter, scatter_add and one_hot against references computed here from
// the inputs' values (row-major multi-index arithmetic), on fresh random inputs, several dtypes,
// every dim (negative too), non-contiguous inputs and indices, zero-size and one-element shapes,
// plus every error message and the device checks.
#include <algorithm>
#include <numeric>

#include "support/test_support.h"

namespace hw = hwaro;
using Shape = std::vector<std::int64_t>;

namespace {

constexpr hw::DType kDTypes[] = {hw::kFloat32, hw::kFloat64, hw::kInt64};

std::int64_t numel_of(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>());
}

// Row-major linear position of a multi-index in shape.
std::int64_t linear(const Shape& mi, const Shape& shape) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + mi[d];
  return off;
}

// Calls f(multi_index, linear_position) for each element of shape in row-major order.
template <typename F> void for_each_index(const Shape& shape, F&& f) {
  Shape mi(shape.size(), 0);
  const std::int64_t n = numel_of(shape);
  for (std::int64_t i = 0; i < n; ++i) {
    f(mi, i);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++mi[d] < shape[d]) break;
      mi[d] = 0;
    }
  }
}

Shape shape_of(const hw::Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }
std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// A tensor with t's values laid out non-contiguously, or t itself.
hw::Tensor layout(const hw::Tensor& t, bool strided) { return strided ? hw::test::non_contiguous_copy(t) : t; }

std::string device_message(const char* arg, const char* op) {
  return std::string("Expected all tensors to be on the same device, but found at least two devices, cpu and test:0! "
                     "(when checking argument '") +
         arg + "' of " + op + ")";
}

class Indexing : public ::testing::Test {
 protected:
  void SetUp() override { seed_ = hw::test::fresh_seed(); rng_.seed(seed_); }
  hw::Tensor random(const Shape& s, hw::DType dt) { return hw::test::random_tensor(s, dt, rng_); }
  hw::Tensor random_index(const Shape& s, std::int64_t bound) {
    return hw::test::random_tensor(s, hw::kInt64, rng_, 0, static_cast<double>(bound - 1));
  }
  // An index of `shape` whose values along `dim` are distinct in every line (a prefix of a random
  // permutation of [0, bound)), so that a scatter's result does not depend on write order.
  hw::Tensor unique_index(const Shape& shape, std::int64_t dim, std::int64_t bound) {
    std::vector<std::int64_t> values(at(numel_of(shape)));
    Shape lines = shape;
    lines[at(dim)] = 1;
    for_each_index(lines, [&](const Shape& line, std::int64_t) {
      std::vector<std::int64_t> perm(at(bound));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng_);
      Shape mi = line;
      for (std::int64_t k = 0; k < shape[at(dim)]; ++k) {
        mi[at(dim)] = k;
        values[at(linear(mi, shape))] = perm[at(k)];
      }
    });
    return hw::tensor(values, hw::IntArrayRef(shape));
  }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

// ---- index_select ----

std::vector<double> index_select_ref(const hw::Tensor& x, std::int64_t dim, const hw::Tensor& index) {
  const Shape xs = shape_of(x);
  const auto xv = hw::test::values_of(x);
  const auto iv = hw::test::values_of(index);
  Shape os = xs;
  os[at(dim)] = static_cast<std::int64_t>(iv.size());
  std::vector<double> out;
  for_each_index(os, [&](const Shape& mi, std::int64_t) {
    Shape src = mi;
    src[at(dim)] = static_cast<std::int64_t>(iv[at(mi[at(dim)])]);
    out.push_back(xv[at(linear(src, xs))]);
  });
  return out;
}

TEST_F(Indexing, IndexSelectEveryDimDTypeAndLayout) {
  SCOPED_TRACE(seed_);
  const Shape shape{3, 4, 5};
  for (hw::DType dt : kDTypes) {
    for (std::int64_t dim = -3; dim < 3; ++dim) {
      for (bool strided : {false, true}) {
        for (hw::DType index_dt : {hw::kInt64, hw::kInt32}) {
          SCOPED_TRACE(::testing::Message() << dt << " dim " << dim << " strided " << strided << " " << index_dt);
          const std::int64_t d = (dim + 3) % 3;
          const hw::Tensor x = random(shape, dt);
          const hw::Tensor index = random_index({7}, shape[at(d)]).to(index_dt);
          const hw::Tensor out = hw::index_select(layout(x, strided), dim, layout(index, strided));
          Shape expected_shape = shape;
          expected_shape[at(d)] = 7;
          EXPECT_EQ(shape_of(out), expected_shape);
          EXPECT_EQ(out.dtype(), dt);
          EXPECT_EQ(hw::test::values_of(out), index_select_ref(x, d, index));
          EXPECT_EQ(hw::test::values_of(x.index_select(dim, index)), hw::test::values_of(out));
        }
      }
    }
  }
}

TEST_F(Indexing, IndexSelectTransposedInputAndLargeInput) {
  SCOPED_TRACE(seed_);
  const hw::Tensor x = random({6, 9}, hw::kFloat32).t();  // [9, 6], strides (1, 9)
  const hw::Tensor index = random_index({11}, 6);
  EXPECT_EQ(hw::test::values_of(hw::index_select(x, 1, index)), index_select_ref(x.contiguous(), 1, index));
  // Large enough to run on several threads.
  const hw::Tensor big = random({300, 257}, hw::kFloat64);
  const hw::Tensor big_index = random_index({400}, 300);
  EXPECT_EQ(hw::test::values_of(hw::index_select(big, 0, big_index)), index_select_ref(big, 0, big_index));
}

TEST_F(Indexing, IndexSelectZeroSizeOneElementAndScalar) {
  SCOPED_TRACE(seed_);
  const hw::Tensor x = random({3, 4}, hw::kFloat32);
  EXPECT_EQ(shape_of(hw::index_select(x, 1, hw::empty({0}, {.dtype = hw::kInt64}))), (Shape{3, 0}));
  const hw::Tensor empty_rows = hw::empty({0, 4});
  EXPECT_EQ(shape_of(hw::index_select(empty_rows, 1, hw::tensor<std::int64_t>({3, 0}))), (Shape{0, 2}));
  const hw::Tensor one = random({1}, hw::kFloat64);
  const hw::Tensor picked = hw::index_select(one, 0, hw::tensor<std::int64_t>({0, 0}));
  EXPECT_EQ(hw::test::values_of(picked), std::vector<double>(2, hw::test::values_of(one)[0]));
  const hw::Tensor scalar = hw::scalar_tensor(2.5);
  const hw::Tensor s = hw::index_select(scalar, 0, hw::scalar_tensor(0, {.dtype = hw::kInt64}));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
  // A 0-d index picks one slice.
  EXPECT_EQ(shape_of(hw::index_select(x, 0, hw::scalar_tensor(2, {.dtype = hw::kInt64}))), (Shape{1, 4}));
}

TEST_F(Indexing, IndexSelectErrors) {
  const hw::Tensor x = hw::zeros({3, 5});
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>(
      [&] { hw::index_select(x, 1, hw::tensor<std::int64_t>({0, 5})); },
      "index 5 is out of bounds for dimension 1 with size 5"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>(
      [&] { hw::index_select(x, 0, hw::tensor<std::int32_t>({-1})); },
      "index -1 is out of bounds for dimension 0 with size 3"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { hw::index_select(x, 2, hw::tensor<std::int64_t>({0})); },
                                                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::index_select(x, 0, hw::tensor({0.f})); },
                                               "index_select(): Expected dtype int32 or int64 for index, but got"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::index_select(x, 0, hw::zeros({1, 1}, {.dtype = hw::kInt64})); },
      "index_select(): Index is supposed to be a vector (0-D or 1-D), but got 2-D index of shape"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::index_select(hw::scalar_tensor(1.0), 0, hw::tensor<std::int64_t>({0, 0})); },
      "index_select(): Index to scalar can have only 1 value, got 2 value(s)"));
  const hw::Tensor other = hw::zeros({2}, {.dtype = hw::kInt64, .device = hw::test::other_device()});
  EXPECT_TRUE(hw::test::throws_with<hw::DeviceMismatchError>([&] { hw::index_select(x, 0, other); },
                                                             device_message("index", "index_select")));
}

// ---- gather ----

std::vector<double> gather_ref(const hw::Tensor& x, std::int64_t dim, const hw::Tensor& index) {
  const Shape xs = shape_of(x);
  const auto xv = hw::test::values_of(x);
  const auto iv = hw::test::values_of(index);
  std::vector<double> out;
  for_each_index(shape_of(index), [&](const Shape& mi, std::int64_t i) {
    Shape src = mi;
    src[at(dim)] = static_cast<std::int64_t>(iv[at(i)]);
    out.push_back(xv[at(linear(src, xs))]);
  });
  return out;
}

TEST_F(Indexing, GatherEveryDimDTypeAndLayout) {
  SCOPED_TRACE(seed_);
  const Shape shape{4, 5, 6};
  for (hw::DType dt : kDTypes) {
    for (std::int64_t dim = -3; dim < 3; ++dim) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dt << " dim " << dim << " strided " << strided);
        const std::int64_t d = (dim + 3) % 3;
        const hw::Tensor x = random(shape, dt);
        // Smaller than self apart from dim, where it may be larger.
        Shape is{3, 4, 5};
        is[at(d)] = 9;
        const hw::Tensor index = random_index(is, shape[at(d)]);
        const hw::Tensor out = hw::gather(layout(x, strided), dim, layout(index, strided));
        EXPECT_EQ(shape_of(out), is);
        EXPECT_EQ(out.dtype(), dt);
        EXPECT_EQ(hw::test::values_of(out), gather_ref(x, d, index));
        EXPECT_EQ(hw::test::values_of(x.gather(dim, index)), hw::test::values_of(out));
      }
    }
  }
}

TEST_F(Indexing, GatherTransposedIndexZeroSizeOneElement) {
  SCOPED_TRACE(seed_);
  const hw::Tensor x = random({5, 7}, hw::kFloat32);
  const hw::Tensor index = random_index({6, 5}, 7).t();  // [5, 6] transposed
  EXPECT_EQ(hw::test::values_of(hw::gather(x, 1, index)), gather_ref(x, 1, index.contiguous()));
  EXPECT_EQ(shape_of(hw::gather(x, 0, hw::empty({0, 7}, {.dtype = hw::kInt64}))), (Shape{0, 7}));
  const hw::Tensor one = random({1}, hw::kFloat64);
  EXPECT_EQ(hw::test::values_of(hw::gather(one, 0, hw::zeros({3}, {.dtype = hw::kInt64}))),
            std::vector<double>(3, hw::test::values_of(one)[0]));
  const hw::Tensor s = hw::gather(hw::scalar_tensor(4.0), 0, hw::scalar_tensor(0, {.dtype = hw::kInt64}));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 4.0);
  // Large enough to run on several threads.
  const hw::Tensor big = random({200, 300}, hw::kFloat32);
  const hw::Tensor big_index = random_index({200, 400}, 300);
  EXPECT_EQ(hw::test::values_of(hw::gather(big, 1, big_index)), gather_ref(big, 1, big_index));
}

TEST_F(Indexing, GatherErrors) {
  const hw::Tensor x = hw::zeros({3, 5});
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>(
      [&] { hw::gather(x, 0, hw::full({2, 2}, 3, {.dtype = hw::kInt64})); },
      "index 3 is out of bounds for dimension 0 with size 3"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::gather(x, 0, hw::zeros({2, 2}, {.dtype = hw::kInt32})); },
                                               "gather(): Expected dtype int64 for index, but got"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::gather(x, 0, hw::zeros({2}, {.dtype = hw::kInt64})); },
      "gather(): Index tensor must have the same number of dimensions as self tensor (2), but got 1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::gather(x, 0, hw::zeros({2, 6}, {.dtype = hw::kInt64})); },
      "gather(): Expected index [2, 6] to be no larger than self [3, 5] apart from dimension 0 (dimension 1 is larger)"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { hw::gather(x, -3, hw::zeros({2, 2}, {.dtype = hw::kInt64})); },
                                                    "Dimension out of range"));
  const hw::Tensor other = hw::zeros({2, 2}, {.dtype = hw::kInt64, .device = hw::test::other_device()});
  EXPECT_TRUE(hw::test::throws_with<hw::DeviceMismatchError>([&] { hw::gather(x, 0, other); },
                                                             device_message("index", "gather")));
}

// ---- scatter and scatter_add ----

// self with src scattered (accumulate: added) along dim at index.
std::vector<double> scatter_ref(const hw::Tensor& self, std::int64_t dim, const hw::Tensor& index,
                                const hw::Tensor& src, bool accumulate) {
  const Shape ss = shape_of(self), srcs = shape_of(src);
  auto out = hw::test::values_of(self);
  const auto iv = hw::test::values_of(index);
  const auto sv = hw::test::values_of(src);
  for_each_index(shape_of(index), [&](const Shape& mi, std::int64_t i) {
    Shape dst = mi;
    dst[at(dim)] = static_cast<std::int64_t>(iv[at(i)]);
    const double v = sv[at(linear(mi, srcs))];
    double& o = out[at(linear(dst, ss))];
    o = accumulate ? o + v : v;
  });
  return out;
}

TEST_F(Indexing, ScatterEveryDimDTypeAndLayout) {
  SCOPED_TRACE(seed_);
  const Shape shape{4, 5, 6};
  for (hw::DType dt : kDTypes) {
    for (std::int64_t dim = -3; dim < 3; ++dim) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dt << " dim " << dim << " strided " << strided);
        const std::int64_t d = (dim + 3) % 3;
        const hw::Tensor self = random(shape, dt);
        const Shape is{3, 4, 3};
        const hw::Tensor index = unique_index(is, d, shape[at(d)]);
        const hw::Tensor src = random({4, 5, 5}, dt);  // larger than index everywhere
        const std::vector<double> before = hw::test::values_of(self);
        const hw::Tensor out = hw::scatter(layout(self, strided), dim, layout(index, strided), layout(src, strided));
        EXPECT_EQ(shape_of(out), shape);
        EXPECT_EQ(out.dtype(), dt);
        EXPECT_EQ(hw::test::values_of(out), scatter_ref(self, d, index, src, false));
        EXPECT_EQ(hw::test::values_of(self), before);  // out of place
        EXPECT_EQ(hw::test::values_of(self.scatter(dim, index, src)), hw::test::values_of(out));
        // In place, on a non-contiguous target too.
        hw::Tensor target = layout(self.clone(), strided);
        const auto version = target.version();
        hw::Tensor& r = target.scatter_(dim, index, src);
        EXPECT_TRUE(r.is_same(target));
        EXPECT_GT(target.version(), version);
        EXPECT_EQ(hw::test::values_of(target), hw::test::values_of(out));
      }
    }
  }
}

TEST_F(Indexing, ScatterAddEveryDimDTypeAndLayout) {
  SCOPED_TRACE(seed_);
  const Shape shape{4, 5, 6};
  for (hw::DType dt : kDTypes) {
    for (std::int64_t dim = -3; dim < 3; ++dim) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dt << " dim " << dim << " strided " << strided);
        const std::int64_t d = (dim + 3) % 3;
        const hw::Tensor self = random(shape, dt);
        Shape is{3, 4, 5};
        is[at(d)] = 11;  // more entries than slots along dim: duplicates accumulate
        const hw::Tensor index = random_index(is, shape[at(d)]);
        Shape srcs = is;
        for (auto& s : srcs) s += 1;
        const hw::Tensor src = random(srcs, dt);
        const hw::Tensor out = hw::scatter_add(layout(self, strided), dim, layout(index, strided), layout(src, strided));
        EXPECT_EQ(shape_of(out), shape);
        EXPECT_TRUE(hw::test::all_close(hw::test::values_of(out), scatter_ref(self, d, index, src, true),
                                        hw::test::rtol_for(dt), hw::test::atol_for(dt)));
        hw::Tensor target = layout(self.clone(), strided);
        const auto version = target.version();
        EXPECT_TRUE(target.scatter_add_(dim, index, src).is_same(target));
        EXPECT_GT(target.version(), version);
        EXPECT_EQ(hw::test::values_of(target), hw::test::values_of(out));
        EXPECT_EQ(hw::test::values_of(self.scatter_add(dim, index, src)), hw::test::values_of(out));
      }
    }
  }
}

TEST_F(Indexing, ScatterAddIsDeterministicOnLargeInputs) {
  SCOPED_TRACE(seed_);
  // Many float32 additions into few slots, over enough elements to use several threads:
  // every run must give the same bits, and the sums must match a float64 reference.
  const hw::Tensor src = random({64, 4096}, hw::kFloat32);
  const hw::Tensor index = random_index({64, 4096}, 8);
  const hw::Tensor self = hw::zeros({64, 8});
  const hw::Tensor first = hw::scatter_add(self, 1, index, src);
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(hw::test::values_of(hw::scatter_add(self, 1, index, src)), hw::test::values_of(first));
  }
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(first), scatter_ref(self, 1, index, src, true), 1e-4, 1e-3));
  // Along dim 0, with one long line per column.
  const hw::Tensor tall_src = random({20000, 3}, hw::kFloat32);
  const hw::Tensor tall_index = random_index({20000, 3}, 5);
  const hw::Tensor tall = hw::scatter_add(hw::zeros({5, 3}), 0, tall_index, tall_src);
  EXPECT_EQ(hw::test::values_of(hw::scatter_add(hw::zeros({5, 3}), 0, tall_index, tall_src)), hw::test::values_of(tall));
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(tall), scatter_ref(hw::zeros({5, 3}), 0, tall_index, tall_src, true),
                                  1e-4, 1e-2));
}

TEST_F(Indexing, ScatterZeroSizeAndOneElement) {
  SCOPED_TRACE(seed_);
  const hw::Tensor self = random({3, 4}, hw::kFloat32);
  const hw::Tensor empty_index = hw::empty({0, 4}, {.dtype = hw::kInt64});
  EXPECT_EQ(hw::test::values_of(hw::scatter(self, 0, empty_index, random({2, 4}, hw::kFloat32))),
            hw::test::values_of(self));
  EXPECT_EQ(hw::test::values_of(hw::scatter_add(self, 0, empty_index, random({2, 4}, hw::kFloat32))),
            hw::test::values_of(self));
  const hw::Tensor one = random({1}, hw::kFloat64);
  const hw::Tensor src = random({1}, hw::kFloat64);
  const hw::Tensor zero = hw::zeros({1}, {.dtype = hw::kInt64});
  EXPECT_EQ(hw::test::values_of(hw::scatter(one, 0, zero, src)), hw::test::values_of(src));
  EXPECT_EQ(hw::test::values_of(hw::scatter_add(one, 0, zero, src))[0],
            hw::test::values_of(one)[0] + hw::test::values_of(src)[0]);
}

TEST_F(Indexing, ScatterErrors) {
  hw::Tensor x = hw::zeros({3, 5});
  const hw::Tensor idx = hw::zeros({2, 2}, {.dtype = hw::kInt64});
  const hw::Tensor src = hw::ones({2, 2});
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>(
      [&] { hw::scatter(x, 1, hw::full({2, 2}, 5, {.dtype = hw::kInt64}), src); },
      "index 5 is out of bounds for dimension 1 with size 5"));
  // A bad index leaves an in-place target untouched.
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>(
      [&] { x.scatter_add_(0, hw::tensor<std::int64_t>({{0, 1}, {2, -1}}), src); },
      "index -1 is out of bounds for dimension 0 with size 3"));
  EXPECT_EQ(hw::test::values_of(x), std::vector<double>(15, 0.0));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::scatter(x, 0, idx.to(hw::kInt32), src); },
                                               "scatter(): Expected dtype int64 for index, but got"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::scatter_add(x, 0, idx, src.to(hw::kFloat64)); },
                                               "scatter_add(): Expected self.dtype to be equal to src.dtype"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::scatter(x, 0, hw::zeros({2}, {.dtype = hw::kInt64}), src); },
      "scatter(): Index tensor must have the same number of dimensions as self tensor (2), but got 1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::scatter(x, 0, idx, hw::ones({4})); },
      "scatter(): src tensor must have the same number of dimensions as self tensor (2), but got 1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { x.scatter_(0, hw::zeros({2, 6}, {.dtype = hw::kInt64}), hw::ones({2, 6})); },
      "scatter_(): Expected index [2, 6] to be no larger than self [3, 5] apart from dimension 0 (dimension 1 is larger)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::scatter_add(x, 0, hw::zeros({4, 2}, {.dtype = hw::kInt64}), hw::ones({3, 2})); },
      "scatter_add(): Expected index [4, 2] to be no larger than src [3, 2] (dimension 0 is larger)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [&] { hw::scatter_add(hw::zeros({2}, {.dtype = hw::kBool}), 0, hw::zeros({1}, {.dtype = hw::kInt64}),
                            hw::ones({1}, {.dtype = hw::kBool})); },
      "scatter_add(): not supported for bool tensors"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { hw::scatter(x, 2, idx, src); }, "Dimension out of range"));

  const hw::Device other = hw::test::other_device();
  const hw::Tensor idx_other = hw::zeros({2, 2}, {.dtype = hw::kInt64, .device = other});
  const hw::Tensor src_other = hw::ones({2, 2}, {.device = other});
  using hw::DeviceMismatchError;
  EXPECT_TRUE(hw::test::throws_with<DeviceMismatchError>([&] { hw::scatter(x, 0, idx_other, src); },
                                                         device_message("index", "scatter")));
  EXPECT_TRUE(hw::test::throws_with<DeviceMismatchError>([&] { hw::scatter(x, 0, idx, src_other); },
                                                         device_message("src", "scatter")));
  EXPECT_TRUE(hw::test::throws_with<DeviceMismatchError>([&] { hw::scatter_add(x, 0, idx_other, src); },
                                                         device_message("index", "scatter_add")));
  EXPECT_TRUE(hw::test::throws_with<DeviceMismatchError>([&] { hw::scatter_add(x, 0, idx, src_other); },
                                                         device_message("src", "scatter_add")));
  EXPECT_TRUE(hw::test::throws_with<DeviceMismatchError>([&] { x.scatter_(0, idx_other, src); },
                                                         device_message("index", "scatter_")));
  EXPECT_TRUE(hw::test::throws_with<DeviceMismatchError>([&] { x.scatter_add_(0, idx, src_other); },
                                                         device_message("src", "scatter_add_")));
}

TEST_F(Indexing, SixteenBitFloatsBoolAndInt32) {
  SCOPED_TRACE(seed_);
  for (hw::DType dt : {hw::kFloat16, hw::kBFloat16, hw::kBool, hw::kInt32, hw::kUInt8}) {
    SCOPED_TRACE(::testing::Message() << dt);
    const hw::Tensor x = random({4, 6}, dt);
    const hw::Tensor rows = random_index({5}, 4);
    EXPECT_EQ(hw::test::values_of(hw::index_select(x, 0, rows)), index_select_ref(x, 0, rows));
    const hw::Tensor index = random_index({4, 8}, 6);
    EXPECT_EQ(hw::test::values_of(hw::gather(x, 1, index)), gather_ref(x, 1, index));
    const hw::Tensor unique = unique_index({4, 3}, 1, 6);
    const hw::Tensor src = random({4, 3}, dt);
    EXPECT_EQ(hw::test::values_of(hw::scatter(x, 1, unique, src)), scatter_ref(x, 1, unique, src, false));
    if (dt == hw::kBool) continue;
    // Small integers: exact in every dtype (Half/BFloat16 accumulate in float).
    const hw::Tensor ints = hw::test::random_tensor({4, 6}, hw::kInt64, rng_, 0, 3).to(dt);
    const hw::Tensor add_src = hw::test::random_tensor({4, 8}, hw::kInt64, rng_, 0, 3).to(dt);
    EXPECT_EQ(hw::test::values_of(hw::scatter_add(ints, 1, index, add_src)), scatter_ref(ints, 1, index, add_src, true));
  }
}

// ---- one_hot ----

TEST_F(Indexing, OneHot) {
  SCOPED_TRACE(seed_);
  for (bool strided : {false, true}) {
    const hw::Tensor classes = random_index({4, 6}, 7);
    const auto cv = hw::test::values_of(classes);
    const std::int64_t inferred = static_cast<std::int64_t>(*std::max_element(cv.begin(), cv.end())) + 1;
    for (std::int64_t num_classes : {std::int64_t{-1}, std::int64_t{9}}) {
      const hw::Tensor out = hw::one_hot(layout(classes, strided), num_classes);
      const std::int64_t c = num_classes == -1 ? inferred : num_classes;
      EXPECT_EQ(shape_of(out), (Shape{4, 6, c}));
      EXPECT_EQ(out.dtype(), hw::kInt64);
      std::vector<double> expected;
      for (double v : cv) {
        for (std::int64_t k = 0; k < c; ++k) expected.push_back(static_cast<double>(k) == v ? 1.0 : 0.0);
      }
      EXPECT_EQ(hw::test::values_of(out), expected);
    }
  }
  EXPECT_EQ(shape_of(hw::one_hot(hw::empty({0}, {.dtype = hw::kInt64}), 3)), (Shape{0, 3}));
  EXPECT_EQ(hw::test::values_of(hw::one_hot(hw::scalar_tensor(2, {.dtype = hw::kInt64}))),
            (std::vector<double>{0, 0, 1}));
}

TEST_F(Indexing, OneHotErrors) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::one_hot(hw::tensor<std::int64_t>({0, -1})); },
                                               "one_hot(): Class values must be non-negative, but found -1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(
      [] { hw::one_hot(hw::tensor<std::int64_t>({0, 3}), 3); },
      "one_hot(): Class values must be smaller than num_classes (3), but found 3"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::one_hot(hw::tensor({1.f})); },
                                               "one_hot(): is only applicable to int64 index tensors, but got"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::one_hot(hw::empty({0}, {.dtype = hw::kInt64})); },
                                               "one_hot(): Can not infer the number of classes from an empty tensor"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::one_hot(hw::tensor<std::int64_t>({0}), -2); },
                                               "one_hot(): num_classes must be -1 (infer) or non-negative, got -2"));
}

}  // namespace
