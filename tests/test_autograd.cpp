// Autograd's behaviour as PyTorch users know it: leaves and .grad, accumulation, retain_graph,
// no_grad, detach, in-place checks through the version counter, retain_grad, deep graphs.
#include <limits>

#include "support/test_support.h"
#include "core/tensor_impl.h"  // a storage's lifetime, for what the graph keeps alive

namespace hwaro::test {
namespace {

std::vector<double> grad_of(const Tensor& t) { return values_of(t.grad()); }

TEST(Autograd, LeafGradientOfAProductIsTheOtherFactor) {
  std::mt19937_64 rng(fresh_seed());
  Tensor a = random_tensor({5}, kFloat64, rng).set_requires_grad(true);
  Tensor b = random_tensor({5}, kFloat64, rng);
  (a * b).sum().backward();
  EXPECT_TRUE(all_close(grad_of(a), values_of(b), 0, 0));
  EXPECT_FALSE(b.grad().defined());
  EXPECT_TRUE(a.is_leaf());
}

TEST(Autograd, GradientsAccumulateAcrossBackwardCalls) {
  Tensor w = tensor({1.0, 2.0, 3.0}).set_requires_grad(true);
  (w * 2).sum().backward();
  (w * 3).sum().backward();
  EXPECT_EQ(grad_of(w), (std::vector<double>{5, 5, 5}));
  w.mutable_grad() = Tensor();
  (w * w).sum().backward();
  EXPECT_EQ(grad_of(w), (std::vector<double>{2, 4, 6}));
}

TEST(Autograd, ATensorUsedTwiceSumsBothPaths) {
  Tensor x = tensor({2.0}).set_requires_grad(true);
  Tensor y = x * x + x.exp() + x;  // dy/dx = 2x + e^x + 1
  y.backward();
  EXPECT_NEAR(x.grad().item<double>(), 4 + std::exp(2.0) + 1, 1e-12);
}

TEST(Autograd, GradFnNamesTheOp) {
  Tensor x = randn({2, 3}).set_requires_grad(true);
  EXPECT_EQ(x.grad_fn(), nullptr);
  EXPECT_EQ((x * 2).grad_fn()->name(), "MulBackward");
  EXPECT_EQ(x.sum().grad_fn()->name(), "SumBackward");
  EXPECT_EQ(mm(x, x.t()).grad_fn()->name(), "MmBackward");
  EXPECT_FALSE((x * 2).is_leaf());
}

TEST(Autograd, NonScalarBackwardNeedsAGradient) {
  Tensor x = randn({3}).set_requires_grad(true);
  Tensor y = x * 2;
  EXPECT_TRUE(throws_with<Error>([&] { y.backward(); }, "only for one-element outputs"));
  y.backward(tensor({1.f, 10.f, 100.f}));
  EXPECT_EQ(values_of(x.grad()), (std::vector<double>{2, 20, 200}));
}

// backward's gradient in another floating dtype is converted to the tensor's, as PyTorch's engine
// does (mm's backward refused the mix before); an integer or bool gradient is refused by name.
TEST(Autograd, BackwardsGradientIsConvertedToTheTensorsDtype) {
  std::mt19937_64 rng(fresh_seed());
  Tensor x = random_tensor({2, 3}, kFloat32, rng).set_requires_grad(true);
  const Tensor w = random_tensor({3, 2}, kFloat32, rng);
  const Tensor g = random_tensor({2, 2}, kFloat64, rng);
  mm(x, w).backward(g);
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  std::vector<double> expected(6, 0.0);
  const std::vector<double> gv = values_of(g), wv = values_of(w);
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j < 2; ++j) expected[i * 3 + k] += gv[i * 2 + j] * wv[k * 2 + j];
    }
  }
  EXPECT_TRUE(all_close(grad_of(x), expected, 1e-5, 1e-5));
  EXPECT_TRUE(throws_with<Error>([&] { mm(x, w).backward(ones({2, 2}, {.dtype = kInt64})); }, "floating point"));
  EXPECT_TRUE(throws_with<Error>([&] { mm(x, w).backward(ones({2, 2}, {.dtype = kBool})); }, "floating point"));
}

TEST(Autograd, SecondBackwardNeedsRetainGraph) {
  Tensor x = randn({3}).set_requires_grad(true);
  Tensor y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(all_close(grad_of(x), values_of(x * 4), 1e-6, 1e-6));
  EXPECT_TRUE(throws_with<Error>([&] { y.backward(); }, "retain_graph"));
}

// As PyTorch's: a node frees nothing it never held, so a graph of additions, sums and views can be
// gone through again without retain_graph; a node that holds tensors (mul's factors) still refuses.
TEST(Autograd, ASecondBackwardThroughNodesThatHoldNothingIsAllowed) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Tensor x = random_tensor({2, 3}, kFloat64, rng).set_requires_grad(true);
  Tensor y = (x + 1).reshape({3, 2}).t().sum();
  y.backward();
  y.backward();
  EXPECT_TRUE(all_close(grad_of(x), std::vector<double>(6, 2.0), 0, 0));
  Tensor z = (x * x).sum();
  z.backward();
  EXPECT_TRUE(throws_with<Error>([&] { z.backward(); }, "retain_graph"));
}

// A rule that needs only an input's sizes (a sum, an addition) does not keep the input alive, as
// PyTorch saves only what a gradient reads: here neither intermediate's memory outlives its tensor
// while the graph (held by loss) is alive, and the gradient is still right.
TEST(Autograd, TheGraphDoesNotKeepAliveWhatNoRuleReads) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Tensor x = random_tensor({64, 32}, kFloat64, rng).set_requires_grad(true);
  Tensor loss;
  std::weak_ptr<Storage> shifted_memory, wide_memory;
  {
    const Tensor shifted = x + 3;                      // AddBackward: sizes only
    const Tensor wide = cat({shifted, shifted}, 1);    // CatBackward: sizes only
    loss = wide.sum();                                 // SumBackward: sizes only
    shifted_memory = shifted.impl_ptr()->storage();
    wide_memory = wide.impl_ptr()->storage();
  }
  EXPECT_TRUE(shifted_memory.expired());
  EXPECT_TRUE(wide_memory.expired());
  loss.backward();
  EXPECT_TRUE(all_close(grad_of(x), std::vector<double>(64 * 32, 2.0), 0, 0));
}

TEST(Autograd, NoGradGuardRecordsNothing) {
  Tensor x = randn({3}).set_requires_grad(true);
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
  }
  EXPECT_TRUE(is_grad_enabled());
  EXPECT_TRUE((x * 2).requires_grad());
}

TEST(Autograd, DetachCutsTheGraphButSharesStorage) {
  Tensor x = randn({3}).set_requires_grad(true);
  Tensor d = (x * 2).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  Tensor y = x * 2;
  EXPECT_TRUE(y.detach().is_alias_of(y));
}

TEST(Autograd, NothingRequiringGradCannotBackward) {
  Tensor x = randn({3});
  EXPECT_TRUE(throws_with<Error>([&] { x.sum().backward(); }, "does not require grad"));
}

TEST(Autograd, RequiresGradOnlyOnFloatLeaves) {
  EXPECT_TRUE(throws_with<Error>([] { arange(3).set_requires_grad(true); }, "floating point"));
  Tensor x = randn({3}).set_requires_grad(true);
  Tensor y = x * 2;
  EXPECT_TRUE(throws_with<Error>([&] { y.set_requires_grad(false); }, "leaf"));
  Tensor z = zeros({2}, {.requires_grad = true});
  EXPECT_TRUE(z.requires_grad());
}

TEST(Autograd, InPlaceOnALeafThatRequiresGradIsRefused) {
  Tensor w = randn({3}).set_requires_grad(true);
  const std::vector<double> before = values_of(w);
  EXPECT_TRUE(throws_with<Error>([&] { w.add_(1); }, "leaf tensor that requires grad"));
  EXPECT_EQ(values_of(w), before);  // refused before anything ran
  NoGradGuard no_grad;              // as an optimiser's update
  w.add_(1);
  EXPECT_NEAR(values_of(w)[0], before[0] + 1, 1e-6);
}

TEST(Autograd, ChangingASavedTensorInPlaceIsCaughtAtBackward) {
  Tensor w = randn({3}).set_requires_grad(true);
  Tensor x = randn({3});
  Tensor y = (w * x).sum();  // saves x for w's gradient
  x.mul_(2);
  EXPECT_TRUE(throws_with<Error>([&] { y.backward(); }, "modified by an in-place operation"));
}

// Only tensors whose values the backward reads are checked, as PyTorch's saved variables: an
// operand of an addition, a weight changed by an optimiser step when only its view or its factor's
// gradient is needed, the input of exp (whose gradient reads the result) may change in place.
TEST(Autograd, ChangingATensorTheBackwardDoesNotReadIsAllowed) {
  std::mt19937_64 rng(fresh_seed());
  Tensor w = random_tensor({2, 3}, kFloat64, rng).set_requires_grad(true);
  Tensor c = random_tensor({3, 2}, kFloat64, rng);
  Tensor d = random_tensor({3}, kFloat64, rng);
  const std::vector<double> ct = values_of(c.t());
  const std::vector<double> exp_w = values_of(w.exp());
  Tensor sum_loss = (w + d).sum();      // AddBackward reads neither operand
  Tensor mul_loss = (c * w.t()).sum();  // w's gradient reads c only; w is reached through a view
  Tensor exp_loss = w.exp().sum();      // ExpBackward reads the result
  d.add_(1);
  {
    NoGradGuard no_grad;  // an optimiser's step between forward and backward
    w.sub_(0.5);
  }
  autograd::backward({sum_loss, mul_loss, exp_loss});
  std::vector<double> expected;
  for (std::size_t i = 0; i < ct.size(); ++i) expected.push_back(1 + ct[i] + exp_w[i]);
  EXPECT_TRUE(all_close(grad_of(w), expected, 1e-12, 1e-12));
  // What a backward reads is still checked: c is mul's saved factor for w's gradient.
  Tensor again = (c * w.t()).sum();
  c.mul_(2);
  EXPECT_TRUE(throws_with<Error>([&] { again.backward(); }, "MulBackward"));
}

TEST(Autograd, InPlaceOnAGraphTensorIsRefused) {
  Tensor w = randn({3}).set_requires_grad(true);
  Tensor y = w * 2;
  EXPECT_TRUE(throws_with<Error>([&] { y.relu_(); }, "out-of-place"));
  Tensor plain = zeros({3});
  EXPECT_TRUE(throws_with<Error>([&] { plain.copy_(y); }, "lose its gradient"));
}

TEST(Autograd, RetainGradKeepsANonLeafGradient) {
  Tensor x = tensor({1.0, 2.0}).set_requires_grad(true);
  Tensor h = x * 3;
  h.retain_grad();
  (h * h).sum().backward();
  EXPECT_TRUE(h.retains_grad());
  EXPECT_EQ(values_of(h.grad()), (std::vector<double>{6, 12}));
  EXPECT_EQ(grad_of(x), (std::vector<double>{18, 36}));
}

// A .grad the user set to a broadcast view (several elements on one memory location) cannot take
// an in-place add; accumulating into it must still give the sum, not a write-after-write race.
TEST(Autograd, AccumulatingIntoABroadcastGradGivesTheSum) {
  std::mt19937_64 rng(fresh_seed());
  Tensor x = random_tensor({4, 3}, kFloat64, rng).set_requires_grad(true);
  const Tensor start = random_tensor({3}, kFloat64, rng);
  const Tensor w = random_tensor({4, 3}, kFloat64, rng);
  x.mutable_grad() = start.clone().expand({4, 3});
  (x * w).sum().backward();
  std::vector<double> expected = values_of(w);
  const std::vector<double> s = values_of(start);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += s[i % 3];
  EXPECT_TRUE(all_close(grad_of(x), expected, 1e-12, 1e-12));
}

// A non-contiguous .grad (a transposed buffer) is accumulated into in place, element by element.
TEST(Autograd, AccumulatingIntoATransposedGradKeepsItsLayout) {
  std::mt19937_64 rng(fresh_seed());
  Tensor x = random_tensor({2, 3}, kFloat64, rng).set_requires_grad(true);
  const Tensor w = random_tensor({2, 3}, kFloat64, rng);
  const Tensor buffer = random_tensor({3, 2}, kFloat64, rng);
  x.mutable_grad() = buffer.t();
  const std::vector<double> before = values_of(buffer.t());
  (x * w).sum().backward();
  std::vector<double> expected = values_of(w);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += before[i];
  EXPECT_TRUE(all_close(grad_of(x), expected, 1e-12, 1e-12));
  EXPECT_TRUE(x.grad().is_alias_of(buffer));
}

// The gradient given to backward is copied into .grad, not aliased: changing it later leaves .grad be.
TEST(Autograd, GradDoesNotAliasTheGradientGivenToBackward) {
  std::mt19937_64 rng(fresh_seed());
  Tensor x = random_tensor({3}, kFloat64, rng).set_requires_grad(true);
  Tensor g = random_tensor({3}, kFloat64, rng);
  const std::vector<double> expected = values_of(g);
  x.view({3}).backward(g);
  g.mul_(5);
  EXPECT_TRUE(all_close(grad_of(x), expected, 0, 0));
}

TEST(Autograd, GradientsComeBackInTheInputsDtype) {
  Tensor x = randn({4}, {.dtype = kFloat64}).set_requires_grad(true);
  (x.to(kFloat32) * 2).sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  EXPECT_EQ(grad_of(x), std::vector<double>(4, 2.0));
}

// As PyTorch's AccumulateGrad: a leaf's gradient lands in .grad the moment it is complete, not
// after every node created later (here exp's) has run. DistributedDataParallel's all-reduce of a
// bucket starts from there, so this is what lets it overlap the rest of backward.
TEST(Autograd, ALeafsGradientIsAccumulatedAsSoonAsItIsComplete) {
  Tensor x = randn({4}).set_requires_grad(true);
  Tensor w = randn({4}).set_requires_grad(true);
  Tensor b = (x * 2.0).exp();
  Tensor loss = (b * w).sum();
  bool w_grad_ready_before_exp = false;
  b.grad_fn()->add_pre_hook([&](const Tensor&) { w_grad_ready_before_exp = w.grad().defined(); });
  loss.backward();
  EXPECT_TRUE(w_grad_ready_before_exp);
  EXPECT_TRUE(x.grad().defined());
}

TEST(Autograd, BackwardOfSeveralRoots) {
  Tensor x = tensor({1.0, 2.0}).set_requires_grad(true);
  autograd::backward({(x * 2).sum(), (x * x).sum()});
  EXPECT_EQ(grad_of(x), (std::vector<double>{4, 6}));
}

TEST(Autograd, ADeepChainNeitherRecursesNorOverflowsTheStack) {
  Tensor x = tensor({1.0}).set_requires_grad(true);
  Tensor y = x;
  constexpr int kDepth = 200000;
  for (int i = 0; i < kDepth; ++i) y = y + 1e-6;
  y.backward();
  EXPECT_EQ(x.grad().item<double>(), 1.0);
  y = Tensor();  // frees the chain: iteratively, or this test crashes
}

TEST(Autograd, SetDataKeepsIdentity) {
  Tensor p = randn({2, 2}).set_requires_grad(true);
  Tensor holder = p;
  p.set_data(zeros({3}, {.dtype = kFloat64}));
  EXPECT_EQ(holder.dtype(), kFloat64);
  EXPECT_EQ(holder.numel(), 3);
  EXPECT_TRUE(holder.requires_grad());
}

TEST(Autograd, SetDataRefusesIntegerDataForATensorThatRequiresGrad) {
  Tensor p = randn({2, 2}).set_requires_grad(true);
  EXPECT_TRUE(throws_with<Error>([&] { p.set_data(zeros({2, 2}, {.dtype = kInt64})); }, "must be floating point"));
  EXPECT_EQ(p.dtype(), kFloat32);  // unchanged
  p.set_requires_grad(false);
  p.set_data(zeros({2, 2}, {.dtype = kInt64}));
  EXPECT_EQ(p.dtype(), kInt64);
}

// max(dim) / min(dim) give the whole gradient to the element at the index they return, as
// PyTorch's, even where the row ties; amax splits it evenly among the tied elements. Inputs of
// small integers so that rows tie; the reference walks the 2-D input in float64.
TEST(Autograd, MaxAndMinAlongADimSendTheGradientToTheReturnedIndex) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 4, cols = 5;
  for (const bool is_max : {true, false}) {
    for (const std::int64_t dim : {0, 1, -1}) {
      for (const bool keepdim : {false, true}) {
        SCOPED_TRACE(::testing::Message() << (is_max ? "max" : "min") << " dim " << dim << " keepdim " << keepdim);
        std::uniform_int_distribution<int> level(0, 2);
        std::vector<double> levels(static_cast<std::size_t>(rows * cols));
        for (double& v : levels) v = level(rng);
        Tensor x = tensor(levels, {rows, cols}).set_requires_grad(true);
        auto [values, indices] = is_max ? x.max(dim, keepdim) : x.min(dim, keepdim);
        const Tensor g = random_tensor(values.sizes(), kFloat64, rng);
        values.backward(g);
        const std::int64_t d = dim < 0 ? dim + 2 : dim;
        const std::vector<double> xv = values_of(x), gv = values_of(g), vv = values_of(values);
        const std::vector<std::int64_t> iv = indices.to_vector<std::int64_t>();
        std::vector<double> expected(xv.size(), 0.0);
        const std::int64_t lines = d == 0 ? cols : rows, length = d == 0 ? rows : cols;
        for (std::int64_t line = 0; line < lines; ++line) {
          const auto at = [&](std::int64_t k) {
            return static_cast<std::size_t>(d == 0 ? k * cols + line : line * cols + k);
          };
          double best = xv[at(0)];
          for (std::int64_t k = 1; k < length; ++k)
            best = is_max ? std::max(best, xv[at(k)]) : std::min(best, xv[at(k)]);
          const std::size_t l = static_cast<std::size_t>(line);
          ASSERT_EQ(vv[l], best);
          ASSERT_EQ(xv[at(iv[l])], best) << "the index points at an extremum";
          expected[at(iv[l])] = gv[l];
        }
        EXPECT_EQ(values_of(x.grad()), expected);
      }
    }
  }
  // amax of a tied row: each of the k tied elements gets 1/k.
  Tensor y = tensor({1.0, 3.0, 3.0, 2.0}).set_requires_grad(true);
  y.amax({0}).backward();
  EXPECT_EQ(values_of(y.grad()), (std::vector<double>{0, 0.5, 0.5, 0}));
}

// Edge cases where PyTorch defines a gradient that a plain chain rule would make NaN or lose.
TEST(Autograd, NanExtremaGiveTheirGradientAsPyTorchsDo) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tensor(std::vector<double>{1, nan, 3}).set_requires_grad(true);
  x.max().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{0, 1, 0})) << "the NaN is the maximum and gets the gradient";
  x.mutable_grad() = Tensor();
  x.min().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{0, 1, 0}));

  // maximum/minimum: the loser gets none, a tie half, and against a NaN both sides all.
  for (bool is_max : {true, false}) {
    SCOPED_TRACE(is_max ? "maximum" : "minimum");
    Tensor a = tensor(std::vector<double>{nan, 2, 1}).set_requires_grad(true);
    Tensor b = tensor(std::vector<double>{1, 2, 3}).set_requires_grad(true);
    (is_max ? maximum(a, b) : minimum(a, b)).sum().backward();
    EXPECT_EQ(grad_of(a), (std::vector<double>{1, 0.5, is_max ? 0.0 : 1.0}));
    EXPECT_EQ(grad_of(b), (std::vector<double>{1, 0.5, is_max ? 1.0 : 0.0}));
  }
}

TEST(Autograd, NormsBelowOneHaveAZeroGradientAtZero) {
  // ||x||_0.5 = (sum |x_i|^0.5)^2 = 9 here; d/dx_i = 9^(1/2) * |x_i|^(-1/2), and 0 where x_i = 0.
  Tensor x = tensor(std::vector<double>{0, 1, -4}).set_requires_grad(true);
  const Tensor half = x.norm(0.5);
  EXPECT_DOUBLE_EQ(half.item<double>(), 9.0);
  half.backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{0, 3, -1.5}));
  Tensor zeros_only = zeros({3}, {.dtype = kFloat64}).set_requires_grad(true);
  zeros_only.norm(0.5).backward();
  EXPECT_EQ(grad_of(zeros_only), (std::vector<double>(3, 0.0)));
  // The "0-norm" counts non-zeros; its gradient is 0, and it still has one.
  Tensor y = tensor(std::vector<double>{0, 2, -1, std::numeric_limits<double>::infinity()}).set_requires_grad(true);
  const Tensor count = y.norm(0);
  EXPECT_EQ(count.item<double>(), 3.0);
  ASSERT_TRUE(count.requires_grad());
  count.backward();
  EXPECT_EQ(grad_of(y), (std::vector<double>(4, 0.0)));
}

// As PyTorch's: a leaf whose requires_grad is turned off after the forward gets no .grad, and
// requires_grad_(true) on a computed tensor (which already requires grad) changes nothing.
TEST(Autograd, RequiresGradChangesAfterTheForward) {
  Tensor w = tensor(std::vector<double>{1, 2}).set_requires_grad(true);
  Tensor other = tensor(std::vector<double>{5}).set_requires_grad(true);
  const Tensor loss = (w * 3.0).sum() + other.sum();
  w.set_requires_grad(false);
  loss.backward();
  EXPECT_FALSE(w.grad().defined());
  EXPECT_EQ(grad_of(other), (std::vector<double>{1}));

  Tensor y = other * 2.0;
  EXPECT_NO_THROW(y.set_requires_grad(true));
  EXPECT_TRUE(throws_with<Error>([&] { y.set_requires_grad(false); }, "only change requires_grad of leaf tensors"));
}

}  // namespace
}  // namespace hwaro::test
