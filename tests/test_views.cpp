// View ops: results share storage and its version counter with their base, have the expected
// strides and values, and reject bad arguments with clear messages.
#include "support/test_support.h"

namespace hw = hwaro;

namespace {

// The values a view of a contiguous base must hold: read from the base's flat values through the
// view's own sizes, strides and storage offset.
std::vector<double> through_geometry(const hw::Tensor& view, const std::vector<double>& base_flat) {
  std::vector<double> out;
  std::vector<std::int64_t> index(static_cast<std::size_t>(view.dim()), 0);
  for (std::int64_t i = 0; i < view.numel(); ++i) {
    std::int64_t offset = view.storage_offset();
    for (std::int64_t d = 0; d < view.dim(); ++d) offset += index[static_cast<std::size_t>(d)] * view.stride(d);
    out.push_back(base_flat.at(static_cast<std::size_t>(offset)));
    for (std::int64_t d = view.dim(); d-- > 0;) {
      if (++index[static_cast<std::size_t>(d)] < view.size(d)) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return out;
}

class Views : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = hw::test::fresh_seed();
    std::mt19937_64 rng(seed_);
    base_ = hw::test::random_tensor({4, 5, 6}, hw::kFloat32, rng);
    flat_ = hw::test::values_of(base_);
  }
  // A view of base_: aliases it, and its values follow its geometry.
  void expect_view(const hw::Tensor& v, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides,
                   std::int64_t offset = 0) {
    SCOPED_TRACE(seed_);
    EXPECT_TRUE(v.is_alias_of(base_));
    EXPECT_EQ(v.sizes(), hw::IntArrayRef(sizes));
    EXPECT_EQ(v.strides(), hw::IntArrayRef(strides));
    EXPECT_EQ(v.storage_offset(), offset);
    EXPECT_EQ(v.dtype(), base_.dtype());
    EXPECT_EQ(hw::test::values_of(v), through_geometry(v, flat_));
  }
  double at(std::int64_t i, std::int64_t j, std::int64_t k) const { return flat_[static_cast<std::size_t>(i * 30 + j * 6 + k)]; }

  std::uint64_t seed_ = 0;
  hw::Tensor base_;
  std::vector<double> flat_;
};

}  // namespace

TEST_F(Views, View) {
  expect_view(base_.view({20, 6}), {20, 6}, {6, 1});
  expect_view(base_.view({-1}), {120}, {1});
  expect_view(base_.view({2, -1, 3}), {2, 20, 3}, {60, 3, 1});
  expect_view(base_.view({4, 5, 6, 1}), {4, 5, 6, 1}, {30, 6, 1, 1});
  EXPECT_EQ(hw::test::values_of(base_.view({120})), flat_);
  // A view of a non-contiguous tensor where the layout allows: split a dim of a transpose.
  expect_view(base_.transpose(0, 2).view({2, 3, 5, 4}), {2, 3, 5, 4}, {3, 1, 6, 30});
  expect_view(base_.view_as(hw::zeros({6, 20})), {6, 20}, {20, 1});
}

TEST_F(Views, ViewErrors) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.view({-1, -1}); }, "view: only one dimension can be inferred (-1)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.view({7, 3}); }, "view: shape [7, 3] is invalid for input of size 120"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.view({7, -1}); }, "shape [7, -1] is invalid for input of size 120"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.view({-2, 60}); }, "invalid shape dimension -2"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.transpose(0, 1).view({120}); },
                                               "view: size [120] is not compatible with the input's size [5, 4, 6] and "
                                               "stride [6, 30, 1]"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.transpose(0, 1).view({120}); }, "use reshape() instead"));
}

TEST_F(Views, ReshapeCopiesOnlyWhenItMust) {
  expect_view(base_.reshape({6, 20}), {6, 20}, {20, 1});
  expect_view(base_.transpose(1, 2).reshape({4, 6, 5}), {4, 6, 5}, {30, 1, 6});  // same shape: still a view
  const hw::Tensor copied = base_.transpose(0, 1).reshape({-1});
  EXPECT_FALSE(copied.is_alias_of(base_));
  EXPECT_TRUE(copied.is_contiguous());
  std::vector<double> expected;
  for (std::int64_t j = 0; j < 5; ++j) {
    for (std::int64_t i = 0; i < 4; ++i) {
      for (std::int64_t k = 0; k < 6; ++k) expected.push_back(at(i, j, k));
    }
  }
  EXPECT_EQ(hw::test::values_of(copied), expected);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.reshape({11, -1}); }, "reshape: shape [11, -1] is invalid for input of size 120"));
}

TEST_F(Views, Flatten) {
  expect_view(base_.flatten(), {120}, {1});
  expect_view(base_.flatten(1), {4, 30}, {30, 1});
  expect_view(base_.flatten(0, 1), {20, 6}, {6, 1});
  expect_view(base_.flatten(-2, -1), {4, 30}, {30, 1});
  expect_view(base_.flatten(1, 1), {4, 5, 6}, {30, 6, 1});
  EXPECT_EQ(hw::scalar_tensor(2.0).flatten().sizes(), hw::IntArrayRef({1}));
  // As PyTorch's: a 0-dim tensor's dims are -1 and 0, so nn::Flatten's start_dim 1 is refused.
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { hw::scalar_tensor(2.0).flatten(1); },
                                                    "Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.flatten(2, 0); }, "flatten: start_dim (2) must not come after end_dim (0)"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.flatten(3); },
                                                    "Dimension out of range (expected to be in range of [-3, 2], but got 3)"));
}

TEST_F(Views, SqueezeAndUnsqueeze) {
  const hw::Tensor u = base_.unsqueeze(1);
  expect_view(u, {4, 1, 5, 6}, {30, 30, 6, 1});  // as PyTorch: size * stride of the next dim
  expect_view(base_.unsqueeze(-1), {4, 5, 6, 1}, {30, 6, 1, 1});
  expect_view(base_.unsqueeze(0), {1, 4, 5, 6}, {120, 30, 6, 1});
  expect_view(base_.unsqueeze(3), {4, 5, 6, 1}, {30, 6, 1, 1});
  expect_view(u.squeeze(1), {4, 5, 6}, {30, 6, 1});
  expect_view(u.squeeze(-3), {4, 5, 6}, {30, 6, 1});
  expect_view(u.squeeze(0), {4, 1, 5, 6}, {30, 30, 6, 1});  // not size 1: unchanged
  expect_view(base_.unsqueeze(0).unsqueeze(2).squeeze(), {4, 5, 6}, {30, 6, 1});
  EXPECT_EQ(hw::zeros({1, 1}).squeeze().dim(), 0);
  EXPECT_EQ(hw::scalar_tensor(1.0).unsqueeze(0).sizes(), hw::IntArrayRef({1}));
  EXPECT_EQ(hw::scalar_tensor(1.0).squeeze(0).dim(), 0);
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.unsqueeze(4); },
                                                    "Dimension out of range (expected to be in range of [-4, 3], but got 4)"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { u.squeeze(-5); }, "but got -5"));
}

TEST_F(Views, TransposePermuteAndT) {
  expect_view(base_.transpose(0, 2), {6, 5, 4}, {1, 6, 30});
  expect_view(base_.transpose(-1, 0), {6, 5, 4}, {1, 6, 30});
  expect_view(base_.transpose(1, 1), {4, 5, 6}, {30, 6, 1});
  expect_view(base_.permute({2, 0, 1}), {6, 4, 5}, {1, 30, 6});
  expect_view(base_.permute({-1, -3, -2}), {6, 4, 5}, {1, 30, 6});
  EXPECT_FALSE(base_.permute({2, 0, 1}).is_contiguous());
  EXPECT_DOUBLE_EQ(base_.permute({2, 0, 1}).select(0, 3).select(0, 1).select(0, 2).item<double>(), at(1, 2, 3));
  const hw::Tensor m = base_.select(0, 1);
  expect_view(m.t(), {6, 5}, {1, 6}, 30);
  expect_view(m.select(0, 0).t(), {6}, {1}, 30);  // 1-D: unchanged
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.t(); }, "t() expects a tensor with <= 2 dimensions, but self is 3-D"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.permute({0, 1}); },
                                               "permute: number of dims (2) must equal the tensor's dimensionality (3)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.permute({0, 1, -3}); }, "permute: dim -3 appears more than once"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.transpose(0, 3); }, "Dimension out of range"));
}

TEST_F(Views, NarrowAndSlice) {
  expect_view(base_.narrow(1, 2, 3), {4, 3, 6}, {30, 6, 1}, 12);
  expect_view(base_.narrow(-1, -2, 2), {4, 5, 2}, {30, 6, 1}, 4);
  expect_view(base_.narrow(0, 4, 0), {0, 5, 6}, {30, 6, 1}, 120);
  expect_view(base_.slice(2, 1, std::nullopt, 2), {4, 5, 3}, {30, 6, 2}, 1);
  expect_view(base_.slice(0, -3, -1), {2, 5, 6}, {30, 6, 1}, 30);
  expect_view(base_.slice(1, 10, 20), {4, 0, 6}, {30, 6, 1}, 30);  // clamped, as Python slices
  expect_view(base_.slice(1, 3, 1), {4, 0, 6}, {30, 6, 1}, 18);
  expect_view(base_.slice(1, -100, 100, 3), {4, 2, 6}, {30, 18, 1});
  expect_view(base_.slice(1, 1, 4).narrow(2, 1, 2), {4, 3, 2}, {30, 6, 1}, 7);
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.narrow(1, 6, 1); },
                                                    "narrow: start (6) out of range for dimension 1 of size 5"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.narrow(1, 3, 3); },
                                                    "narrow: start (3) + length (3) exceeds dimension size (5)"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.narrow(1, 0, -1); }, "exceeds dimension size"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.slice(0, 0, 2, 0); }, "slice: step must be positive, got 0"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::scalar_tensor(1.0).narrow(0, 0, 1); }, "narrow() cannot be applied to a 0-dim tensor"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::scalar_tensor(1.0).slice(0); }, "slice() cannot be applied to a 0-dim tensor"));
}

TEST_F(Views, SelectAndIndex) {
  expect_view(base_.select(0, 2), {5, 6}, {6, 1}, 60);
  expect_view(base_.select(1, -1), {4, 6}, {30, 1}, 24);
  expect_view(base_.select(2, 5), {4, 5}, {30, 6}, 5);
  expect_view(base_[3][4], {6}, {1}, 114);
  expect_view(base_[3][4][5], {}, {}, 119);
  EXPECT_DOUBLE_EQ(base_[1][2][3].item<double>(), at(1, 2, 3));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.select(1, 5); },
                                                    "select(): index 5 out of range for tensor of size [4, 5, 6] at dimension 1"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_.select(1, -6); }, "index -6 out of range"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { base_[4]; }, "index 4 out of range"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::scalar_tensor(1.0).select(0, 0); }, "select() cannot be applied to a 0-dim tensor"));
}

TEST_F(Views, Expand) {
  const hw::Tensor column = base_.select(2, 0).unsqueeze(2);  // [4, 5, 1]
  expect_view(column.expand({4, 5, 3}), {4, 5, 3}, {30, 6, 0});
  expect_view(column.expand({2, -1, -1, 7}), {2, 4, 5, 7}, {0, 30, 6, 0});
  expect_view(base_.expand({4, 5, 6}), {4, 5, 6}, {30, 6, 1});
  expect_view(column.expand_as(hw::zeros({4, 5, 2})), {4, 5, 2}, {30, 6, 0});
  expect_view(base_[0][0][0].expand({3, 2}), {3, 2}, {0, 0});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.expand({4, 5, 7}); },
                                               "expand: the expanded size of the tensor (7) must match the existing size (6) "
                                               "at non-singleton dimension 2"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.expand({5, 6}); },
                                               "the number of sizes provided (2) must be greater or equal to the number of "
                                               "dimensions in the tensor (3)"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { column.expand({-1, 4, 5, 3}); }, "-1 is not allowed in a leading, non-existing dimension"));
}

TEST_F(Views, SplitChunkUnbind) {
  const auto parts = base_.split(2, 1);
  ASSERT_EQ(parts.size(), 3u);
  expect_view(parts[0], {4, 2, 6}, {30, 6, 1}, 0);
  expect_view(parts[2], {4, 1, 6}, {30, 6, 1}, 24);
  const auto chunks = hw::chunk(base_, 4, -1);  // 6 in chunks of 2
  ASSERT_EQ(chunks.size(), 3u);
  expect_view(chunks[1], {4, 5, 2}, {30, 6, 1}, 2);
  EXPECT_EQ(hw::split(base_, 4, 0).size(), 1u);
  const auto rows = base_.unbind(0);
  ASSERT_EQ(rows.size(), 4u);
  expect_view(rows[3], {5, 6}, {6, 1}, 90);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.split(0, 1); }, "split: split_size must be positive, got 0"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { base_.chunk(0); }, "chunk: chunks must be positive, got 0"));
}

TEST_F(Views, WritesAndVersionsAreShared) {
  hw::Tensor v = base_.narrow(1, 1, 2).select(2, 3);  // [4, 2]
  const std::uint32_t before = base_.version();
  EXPECT_EQ(v.version(), before);
  v.fill_(42);
  EXPECT_EQ(base_.version(), before + 1);
  EXPECT_EQ(v.version(), before + 1);
  const auto now = hw::test::values_of(base_);
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t j = 0; j < 5; ++j) {
      for (std::int64_t k = 0; k < 6; ++k) {
        const bool written = (j == 1 || j == 2) && k == 3;
        EXPECT_EQ(now[static_cast<std::size_t>(i * 30 + j * 6 + k)], written ? 42.0 : at(i, j, k));
      }
    }
  }
  hw::Tensor t = base_.transpose(0, 2);
  t.zero_();
  EXPECT_EQ(base_.version(), before + 2);
  t.copy_(hw::ones({6, 5, 4}));
  EXPECT_EQ(base_.version(), before + 3);
  EXPECT_EQ(hw::test::values_of(base_), std::vector<double>(120, 1.0));
  // A copy has its own counter.
  const hw::Tensor c = base_.clone();
  const std::uint32_t c_before = c.version();
  base_.fill_(2);
  EXPECT_EQ(c.version(), c_before);
}

TEST(ViewsMisc, ViewsKeepDeviceAndRequiresGrad) {
  const hw::Tensor x = hw::ones({2, 3}, {.device = hw::test::other_device()});
  EXPECT_EQ(x.t().device(), hw::test::other_device());
  EXPECT_EQ(x.view({6}).device(), hw::test::other_device());
  EXPECT_TRUE(x.view({6}).is_alias_of(x));
  const hw::Tensor g = hw::ones({2, 3}, {.requires_grad = true});
  EXPECT_TRUE(g.narrow(0, 0, 1).requires_grad());
  EXPECT_TRUE(g.view({-1}).requires_grad());
}

TEST(ViewsMisc, ZeroSizeAndOneElement) {
  const hw::Tensor e = hw::zeros({0, 3});
  EXPECT_EQ(e.view({3, 0}).sizes(), hw::IntArrayRef({3, 0}));
  EXPECT_EQ(e.reshape({0, 3, 1}).sizes(), hw::IntArrayRef({0, 3, 1}));
  // With no elements, -1 could be anything: an error, as in PyTorch.
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { e.reshape({0, -1, 3}); }, "is invalid for input of size 0"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { e.view({-1, 0}); }, "is invalid for input of size 0"));
  EXPECT_EQ(e.t().sizes(), hw::IntArrayRef({3, 0}));
  const hw::Tensor one = hw::full({1, 1}, 5.0);
  EXPECT_EQ(one.view({}).dim(), 0);
  EXPECT_EQ(one.view({}).item<double>(), 5.0);
  EXPECT_EQ(one.expand({3, 4}).sizes(), hw::IntArrayRef({3, 4}));
  EXPECT_EQ(hw::test::values_of(one.expand({2, 2})), std::vector<double>(4, 5.0));
}

TEST(ViewsMisc, NonContiguousInputsAndOtherDTypes) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (hw::DType dtype : {hw::kInt64, hw::kFloat16, hw::kBool, hw::kFloat64}) {
    const hw::Tensor src = hw::test::random_tensor({3, 4}, dtype, rng);
    const hw::Tensor nc = hw::test::non_contiguous_copy(src);
    ASSERT_FALSE(nc.is_contiguous());
    const auto v = hw::test::values_of(src);
    EXPECT_EQ(hw::test::values_of(nc.t()), hw::test::values_of(src.t()));
    EXPECT_EQ(hw::test::values_of(nc.reshape({12})), v);
    EXPECT_TRUE(nc.reshape({12}).is_alias_of(nc));  // stride 2 throughout: still a view
    EXPECT_EQ(nc.reshape({12}).stride(0), 2);
    EXPECT_FALSE(nc.t().reshape({12}).is_alias_of(nc));
    EXPECT_EQ(hw::test::values_of(nc.t().reshape({12})), hw::test::values_of(src.t().contiguous()));
    EXPECT_EQ(hw::test::values_of(nc.select(1, 2)), hw::test::values_of(src.select(1, 2)));
    EXPECT_EQ(hw::test::values_of(nc.unsqueeze(1).expand({3, 2, 4})), hw::test::values_of(src.unsqueeze(1).expand({3, 2, 4})));
    EXPECT_EQ(nc.view({3, 2, 2}).dtype(), dtype);  // splitting the last dim keeps its stride pattern
    EXPECT_EQ(hw::test::values_of(nc.view({3, 2, 2})), v);
  }
}
