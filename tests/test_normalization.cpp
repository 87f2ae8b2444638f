// batch_norm (training and evaluation, running statistics), layer_norm and embedding (padding_idx)
// against float64 loops on fresh random inputs; gradients by finite differences; the modules'
// buffers, train/eval behaviour and PyTorch's defaults; errors.
#include <cmath>

#include "support/test_support.h"

namespace hw = hwaro;
namespace F = hw::nn::functional;
using hw::Tensor;

namespace {

// x viewed as [n, c, inner] (inner = product of dims after 1): per channel mean and biased variance.
struct ChannelStats {
  std::vector<double> mean, var;
};
ChannelStats channel_stats(const std::vector<double>& x, std::int64_t n, std::int64_t c, std::int64_t inner) {
  ChannelStats s{std::vector<double>(c, 0.0), std::vector<double>(c, 0.0)};
  const double count = static_cast<double>(n * inner);
  for (std::int64_t ch = 0; ch < c; ++ch) {
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t i = 0; i < inner; ++i) s.mean[ch] += x[(b * c + ch) * inner + i];
    s.mean[ch] /= count;
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t i = 0; i < inner; ++i) {
        const double d = x[(b * c + ch) * inner + i] - s.mean[ch];
        s.var[ch] += d * d;
      }
    s.var[ch] /= count;
  }
  return s;
}

std::vector<double> ref_normalise(const std::vector<double>& x, std::int64_t n, std::int64_t c, std::int64_t inner,
                                  const std::vector<double>& mean, const std::vector<double>& var,
                                  const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> out(x.size());
  for (std::int64_t bi = 0; bi < n; ++bi)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::size_t k = static_cast<std::size_t>((bi * c + ch) * inner + i);
        out[k] = (x[k] - mean[ch]) / std::sqrt(var[ch] + eps) * w[ch] + b[ch];
      }
  return out;
}

TEST(BatchNorm, TrainingUsesBatchStatsAndMovesRunningStats) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{8, 3}, {4, 3, 5}, {3, 4, 5, 6}}) {
    const std::int64_t n = shape[0], c = shape[1];
    std::int64_t inner = 1;
    for (std::size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
    const Tensor x = hw::test::random_tensor(shape, hw::kFloat64, rng, -1, 3);
    const Tensor w = hw::test::random_tensor({c}, hw::kFloat64, rng), b = hw::test::random_tensor({c}, hw::kFloat64, rng);
    Tensor rm = hw::test::random_tensor({c}, hw::kFloat64, rng), rv = hw::test::random_tensor({c}, hw::kFloat64, rng, 0.5, 2);
    const auto rm0 = hw::test::values_of(rm), rv0 = hw::test::values_of(rv);
    const Tensor y = F::batch_norm(x, rm, rv, w, b, /*training=*/true, 0.1, 1e-5);
    const auto xv = hw::test::values_of(x);
    const ChannelStats s = channel_stats(xv, n, c, inner);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y),
                                    ref_normalise(xv, n, c, inner, s.mean, s.var, hw::test::values_of(w),
                                                  hw::test::values_of(b), 1e-5),
                                    1e-10, 1e-10));
    const double unbias = static_cast<double>(n * inner) / static_cast<double>(n * inner - 1);
    std::vector<double> rm1, rv1;
    for (std::int64_t ch = 0; ch < c; ++ch) {
      rm1.push_back(0.9 * rm0[ch] + 0.1 * s.mean[ch]);
      rv1.push_back(0.9 * rv0[ch] + 0.1 * s.var[ch] * unbias);
    }
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(rm), rm1, 1e-12, 1e-12));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(rv), rv1, 1e-12, 1e-12));
    // Evaluation: the running statistics normalise, and nothing moves.
    const std::vector<double> rm_trained = hw::test::values_of(rm);
    const Tensor e = F::batch_norm(x, rm, rv, w, b, /*training=*/false, 0.1, 1e-5);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(e),
                                    ref_normalise(xv, n, c, inner, rm1, rv1, hw::test::values_of(w),
                                                  hw::test::values_of(b), 1e-5),
                                    1e-10, 1e-10));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(rm), rm_trained, 0, 0));
  }
}

TEST(BatchNorm, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  std::vector<Tensor> in = {hw::test::random_tensor({3, 2, 4, 3}, hw::kFloat64, rng),
                            hw::test::random_tensor({2}, hw::kFloat64, rng), hw::test::random_tensor({2}, hw::kFloat64, rng)};
  for (Tensor& t : in) t.set_requires_grad(true);
  auto r = hw::autograd::gradcheck([](auto& v) { return F::batch_norm(v[0], {}, {}, v[1], v[2], true); }, in);
  EXPECT_TRUE(r.ok) << r.message;
  const Tensor rm = hw::test::random_tensor({2}, hw::kFloat64, rng), rv = hw::test::random_tensor({2}, hw::kFloat64, rng, 0.5, 2);
  r = hw::autograd::gradcheck([&](auto& v) { return F::batch_norm(v[0], rm, rv, v[1], v[2], false); }, in);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(BatchNormModule, BuffersTrainEvalAndDefaults) {
  hw::nn::BatchNorm2d bn(4);
  EXPECT_EQ(bn->options.momentum(), 0.1);
  EXPECT_EQ(bn->options.eps(), 1e-5);
  EXPECT_EQ(bn->parameters().size(), 2u);
  const auto buffers = bn->named_buffers();
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_EQ(buffers[0].first, "running_mean");
  EXPECT_EQ(buffers[1].first, "running_var");
  EXPECT_EQ(buffers[2].first, "num_batches_tracked");
  EXPECT_TRUE(hw::equal(bn->running_var, hw::ones({4})));
  const Tensor x = hw::randn({5, 4, 3, 3}) * 2 + 1;
  const Tensor y = bn->forward(x);
  // Training output: per channel mean 0 and biased variance 1 (weight 1, bias 0).
  EXPECT_TRUE(hw::allclose(y.mean({0, 2, 3}), hw::zeros({4}), 1e-4, 1e-5));
  EXPECT_TRUE(hw::allclose(y.var({0, 2, 3}, 0), hw::ones({4}), 1e-3, 1e-3));
  EXPECT_EQ(bn->num_batches_tracked.item<std::int64_t>(), 1);
  EXPECT_TRUE(hw::allclose(bn->running_mean, x.mean({0, 2, 3}) * 0.1, 1e-5, 1e-6));
  bn->eval();
  const Tensor running_before = bn->running_mean.clone();
  const Tensor e = bn->forward(x);
  EXPECT_TRUE(hw::equal(bn->running_mean, running_before));
  EXPECT_EQ(bn->num_batches_tracked.item<std::int64_t>(), 1);
  const Tensor expected = (x - bn->running_mean.reshape({1, 4, 1, 1})) / (bn->running_var.reshape({1, 4, 1, 1}) + 1e-5).sqrt();
  EXPECT_TRUE(hw::allclose(e, expected, 1e-5, 1e-5));
  EXPECT_NE(bn->str().find("BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)"), std::string::npos)
      << bn->str();

  hw::nn::BatchNorm1d plain(hw::nn::BatchNormOptions(3).affine(false).track_running_stats(false));
  EXPECT_TRUE(plain->parameters().empty());
  EXPECT_TRUE(plain->buffers().empty());
  plain->eval();  // no running statistics: the batch's, even in eval
  const Tensor z = plain->forward(hw::randn({6, 3}) * 3);
  EXPECT_TRUE(hw::allclose(z.mean({0}), hw::zeros({3}), 1e-4, 1e-5));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { bn->forward(hw::randn({2, 3, 4, 4})); }, "expected 4 channels"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { plain->forward(hw::randn({2, 3, 4, 4})); }, "2-D or 3-D"));
  hw::nn::BatchNorm1d one(3);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { one->forward(hw::randn({1, 3})); }, "more than 1 value per channel"));
}

// A forward that is refused changes nothing: num_batches_tracked counts only the batches that
// moved the running statistics.
TEST(BatchNormModule, ARefusedForwardLeavesTheBuffersAsTheyWere) {
  hw::nn::BatchNorm1d bn(3);
  const auto one_sample = [&] { bn->forward(hw::randn({1, 3})); };
  const auto integers = [&] { bn->forward(hw::ones({4, 3}, {.dtype = hw::kInt64})); };
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(one_sample, "more than 1 value per channel"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>(integers, "floating point"));
  EXPECT_EQ(bn->num_batches_tracked.item<std::int64_t>(), 0);
  EXPECT_TRUE(hw::equal(bn->running_mean, hw::zeros({3})));
  EXPECT_TRUE(hw::equal(bn->running_var, hw::ones({3})));
}

// PyTorch's momentum=None: the running statistics are the plain average of every batch's mean
// and unbiased variance (factor 1 / num_batches_tracked), the initial zeros and ones forgotten.
TEST(BatchNormModule, MomentumNoneIsACumulativeAverage) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  hw::nn::BatchNorm1d bn(hw::nn::BatchNormOptions(3).momentum(std::nullopt));
  EXPECT_NE(bn->str().find("momentum=None"), std::string::npos) << bn->str();
  bn->to(hw::kFloat64);
  const std::int64_t n = 5, c = 3, batches = 4;
  std::vector<double> mean_sum(c, 0.0), var_sum(c, 0.0);
  for (int k = 0; k < batches; ++k) {
    const Tensor x = hw::test::random_tensor({n, c}, hw::kFloat64, rng, -1, 3);
    bn->forward(x);
    const ChannelStats s = channel_stats(hw::test::values_of(x), n, c, 1);
    for (std::int64_t ch = 0; ch < c; ++ch) {
      mean_sum[ch] += s.mean[ch];
      var_sum[ch] += s.var[ch] * static_cast<double>(n) / static_cast<double>(n - 1);
    }
  }
  std::vector<double> mean_avg, var_avg;
  for (std::int64_t ch = 0; ch < c; ++ch) {
    mean_avg.push_back(mean_sum[ch] / batches);
    var_avg.push_back(var_sum[ch] / batches);
  }
  EXPECT_EQ(bn->num_batches_tracked.item<std::int64_t>(), batches);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(bn->running_mean), mean_avg, 1e-12, 1e-12));
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(bn->running_var), var_avg, 1e-12, 1e-12));
  // A clone keeps the option.
  auto copy = std::dynamic_pointer_cast<hw::nn::BatchNorm1dImpl>(bn->clone_module());
  ASSERT_NE(copy, nullptr);
  EXPECT_FALSE(copy->options.momentum().has_value());
}

TEST(LayerNorm, MatchesReferenceAndGradients) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor x = hw::test::random_tensor({3, 4, 5}, hw::kFloat64, rng, -1, 3);
  const Tensor w = hw::test::random_tensor({4, 5}, hw::kFloat64, rng), b = hw::test::random_tensor({4, 5}, hw::kFloat64, rng);
  const Tensor y = F::layer_norm(x, {4, 5}, w, b, 1e-5);
  const auto xv = hw::test::values_of(x), wv = hw::test::values_of(w), bv = hw::test::values_of(b);
  std::vector<double> expected;
  for (int row = 0; row < 3; ++row) {
    double m = 0, v = 0;
    for (int i = 0; i < 20; ++i) m += xv[row * 20 + i] / 20;
    for (int i = 0; i < 20; ++i) v += (xv[row * 20 + i] - m) * (xv[row * 20 + i] - m) / 20;
    for (int i = 0; i < 20; ++i) expected.push_back((xv[row * 20 + i] - m) / std::sqrt(v + 1e-5) * wv[i] + bv[i]);
  }
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, 1e-10, 1e-10));
  std::vector<Tensor> in = {x.clone(), w.clone(), b.clone()};
  for (Tensor& t : in) t.set_requires_grad(true);
  const auto r = hw::autograd::gradcheck([](auto& v) { return F::layer_norm(v[0], {5}, v[1].select(0, 0), v[2].select(0, 1)); }, in);
  EXPECT_TRUE(r.ok) << r.message;

  hw::nn::LayerNorm ln(hw::nn::LayerNormOptions({5}));
  EXPECT_EQ(ln->parameters().size(), 2u);
  EXPECT_TRUE(hw::allclose(ln->forward(x.to(hw::kFloat32)), F::layer_norm(x.to(hw::kFloat32), {5}), 1e-6, 1e-6));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ln->forward(hw::randn({3, 4})); }, "does not end in normalized_shape"));
}

// PyTorch's LayerNorm(bias=False) has a weight only; elementwise_affine=False has neither.
TEST(LayerNorm, BiasFalseKeepsOnlyTheWeight) {
  const Tensor x = hw::randn({3, 4, 5});
  hw::nn::LayerNorm no_bias(hw::nn::LayerNormOptions({4, 5}).bias(false));
  ASSERT_EQ(no_bias->named_parameters().size(), 1u);
  EXPECT_EQ(no_bias->named_parameters()[0].first, "weight");
  EXPECT_FALSE(no_bias->bias.defined());
  hw::nn::init::normal_(no_bias->weight);
  EXPECT_TRUE(hw::equal(no_bias->forward(x), F::layer_norm(x, {4, 5}, no_bias->weight)));
  hw::nn::LayerNorm plain(hw::nn::LayerNormOptions({5}).elementwise_affine(false));
  EXPECT_TRUE(plain->parameters().empty());
  EXPECT_TRUE(hw::equal(plain->forward(x), F::layer_norm(x, {5})));
}

// 16-bit inputs are normalised in float32, as PyTorch's CPU kernels accumulate them in float: in
// float16 the squared deviations of values around 2000 (up to 500^2) pass 65504, and the mean,
// rounded to 16 bits, would centre them wrongly. Checked against float64 on the 16-bit values.
TEST(Normalization, SixteenBitInputsAreNormalisedInFloat32) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  constexpr std::int64_t n = 4, c = 3, inner = 8;
  for (hw::DType dtype : {hw::kFloat16, hw::kBFloat16}) {
    SCOPED_TRACE(hw::dtype_name(dtype));
    const Tensor x = hw::test::random_tensor({n, c, inner}, dtype, rng, 1500, 2500);
    const std::vector<double> xv = hw::test::values_of(x);
    const std::vector<double> ones(c, 1.0), zeros(c, 0.0);
    const double rtol = hw::test::rtol_for(dtype), atol = hw::test::atol_for(dtype);

    // layer_norm over the last dim, and group_norm with one channel per group: each row of `inner`.
    const ChannelStats rows = channel_stats(xv, 1, n * c, inner);
    const std::vector<double> by_row = ref_normalise(xv, 1, n * c, inner, rows.mean, rows.var,
                                                     std::vector<double>(n * c, 1.0), std::vector<double>(n * c, 0.0), 1e-5);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(F::layer_norm(x, {inner})), by_row, rtol, atol));
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(F::group_norm(x, c)), by_row, rtol, atol));

    // batch_norm in training (the batch's statistics) and in evaluation (float32 running ones).
    const ChannelStats channels = channel_stats(xv, n, c, inner);
    const Tensor train = F::batch_norm(x, {}, {}, {}, {}, /*training=*/true);
    EXPECT_EQ(train.dtype(), dtype);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(train),
                                    ref_normalise(xv, n, c, inner, channels.mean, channels.var, ones, zeros, 1e-5),
                                    rtol, atol));
    const Tensor running_mean = hw::tensor(channels.mean).to(hw::kFloat32);
    const Tensor running_var = hw::tensor(channels.var).to(hw::kFloat32);
    EXPECT_TRUE(hw::test::all_close(
        hw::test::values_of(F::batch_norm(x, running_mean, running_var, {}, {}, /*training=*/false)),
        ref_normalise(xv, n, c, inner, hw::test::values_of(running_mean), hw::test::values_of(running_var), ones,
                      zeros, 1e-5),
        rtol, atol));
  }
}

// As Linear (and PyTorch's norms): a float64 batch through float32 layers is refused, not promoted.
TEST(Normalization, AnInputInAnotherDTypeThanTheAffineParametersIsRefused) {
  hw::nn::LayerNorm ln(hw::nn::LayerNormOptions({5}));
  hw::nn::BatchNorm1d bn(5);
  const Tensor x = hw::randn({4, 5}, {.dtype = hw::kFloat64});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { ln->forward(x); }, "layer_norm: expected weight of the input's dtype"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { bn->forward(x); }, "batch_norm: expected weight of the input's dtype"));
  EXPECT_EQ(bn->num_batches_tracked.item<std::int64_t>(), 0);
  ln->to(hw::kFloat64);
  bn->to(hw::kFloat64);
  EXPECT_EQ(ln->forward(x).dtype(), hw::kFloat64);
  EXPECT_EQ(bn->forward(x).dtype(), hw::kFloat64);
}

TEST(Embedding, RowsPaddingIdxAndGradients) {
  std::mt19937_64 rng(hw::test::fresh_seed());
  const Tensor weight = hw::test::random_tensor({6, 3}, hw::kFloat64, rng);
  const Tensor idx = hw::tensor<std::int64_t>({{0, 5, 2}, {2, 2, 1}});
  const Tensor y = F::embedding(idx, weight);
  ASSERT_EQ(y.sizes(), hw::IntArrayRef({2, 3, 3}));
  const auto wv = hw::test::values_of(weight), iv = hw::test::values_of(idx);
  std::vector<double> expected;
  for (double i : iv)
    for (int d = 0; d < 3; ++d) expected.push_back(wv[static_cast<std::size_t>(i) * 3 + d]);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), expected, 0, 0));

  Tensor w = weight.clone().set_requires_grad(true);
  auto r = hw::autograd::gradcheck([&](auto& v) { return F::embedding(idx, v[0]); }, {w});
  EXPECT_TRUE(r.ok) << r.message;
  // padding_idx 2: its output is still the row, but it receives no gradient.
  Tensor w2 = weight.clone().set_requires_grad(true);
  const Tensor yp = F::embedding(idx, w2, 2);
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(yp), expected, 0, 0));
  yp.sum().backward();
  const auto g = hw::test::values_of(w2.grad());
  const std::vector<double> counts = {1, 1, 0, 0, 0, 1};  // row 2 (three uses) is padding
  for (int row = 0; row < 6; ++row)
    for (int d = 0; d < 3; ++d) EXPECT_EQ(g[row * 3 + d], counts[row]) << "row " << row;

  hw::nn::Embedding emb(hw::nn::EmbeddingOptions(10, 4).padding_idx(-1));
  EXPECT_EQ(*emb->options.padding_idx(), 9);
  EXPECT_TRUE(hw::equal(emb->weight.select(0, 9), hw::zeros({4})));
  EXPECT_EQ(emb->forward(hw::tensor<std::int64_t>({1, 9})).sizes(), hw::IntArrayRef({2, 4}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { emb->forward(hw::tensor<std::int64_t>({10})); }, "10"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { emb->forward(hw::tensor({1.f})); }, "int64 or int32"));
  // int32 indices pick the same rows as int64 ones, as PyTorch's IntTensor indices do.
  EXPECT_TRUE(hw::equal(F::embedding(idx.to(hw::kInt32), weight), y));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { emb->forward(hw::tensor<std::int32_t>({10})); }, "10"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::nn::Embedding(hw::nn::EmbeddingOptions(3, 2).padding_idx(3)); },
                                               "padding_idx 3"));
}

// PyTorch's max_norm: before the lookup, each row the indices pick whose norm exceeds max_norm is
// scaled in place by max_norm / (norm + 1e-7); rows not picked keep their values; the gradient is
// the plain lookup's.
TEST(Embedding, MaxNormRenormalisesTheRowsItLooksUp) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor idx = hw::tensor<std::int64_t>({{0, 2}, {2, 4}});
  for (double p : {2.0, 1.0}) {
    SCOPED_TRACE("norm_type " + std::to_string(p));
    const Tensor initial = hw::test::random_tensor({5, 3}, hw::kFloat64, rng, -2, 2);
    const double max_norm = 1.5;
    std::vector<double> expected = hw::test::values_of(initial);
    for (int row : {0, 2, 4}) {
      double norm = 0;
      for (int d = 0; d < 3; ++d) norm += std::pow(std::abs(expected[row * 3 + d]), p);
      norm = std::pow(norm, 1 / p);
      if (norm > max_norm) {
        for (int d = 0; d < 3; ++d) expected[row * 3 + d] *= max_norm / (norm + 1e-7);
      }
    }
    Tensor weight = initial.clone().set_requires_grad(true);
    const Tensor y = F::embedding(idx, weight, std::nullopt, max_norm, p);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(weight), expected, 1e-12, 1e-12));
    std::vector<double> looked_up;
    for (int row : {0, 2, 2, 4})
      for (int d = 0; d < 3; ++d) looked_up.push_back(expected[row * 3 + d]);
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(y), looked_up, 1e-12, 1e-12));
    y.sum().backward();
    const std::vector<double> counts = {1, 0, 2, 0, 1}, g = hw::test::values_of(weight.grad());
    for (int row = 0; row < 5; ++row) EXPECT_EQ(g[row * 3], counts[row]) << "row " << row;
  }
  hw::nn::Embedding emb(hw::nn::EmbeddingOptions(6, 4).max_norm(1.0));
  emb->forward(hw::tensor<std::int64_t>({1, 3}));
  EXPECT_LE(emb->weight.select(0, 1).norm().item<float>(), 1.0f + 1e-6f);
  EXPECT_LE(emb->weight.select(0, 3).norm().item<float>(), 1.0f + 1e-6f);
  EXPECT_NE(emb->str().find("max_norm=1"), std::string::npos) << emb->str();
}

}  // namespace
