// smooth_l1_loss, huber_loss and kl_div (with their modules) against float64 references written
// out here, with their gradients (the reference's and finite differences'), their errors, and
// nn::utils::clip_grad_value_ against a clamp in float64.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = hwaro::nn::functional;

const std::vector<F::Reduction> kPlainReductions = {F::Reduction::None, F::Reduction::Sum, F::Reduction::Mean};

// A reduction of per-element losses in float64, as PyTorch's: None keeps them, BatchMean divides
// the sum by the batch size.
std::vector<double> reduced(const std::vector<double>& each, F::Reduction reduction, double batch = 1) {
  double sum = 0;
  for (double v : each) sum += v;
  switch (reduction) {
    case F::Reduction::None: return each;
    case F::Reduction::Sum: return {sum};
    case F::Reduction::Mean: return {sum / static_cast<double>(each.size())};
    case F::Reduction::BatchMean: return {sum / batch};
  }
  return {};
}

// PyTorch's smooth_l1 (beta > 0) and huber pointwise losses of d = input - target, and their
// derivatives in d (at |d| == beta the linear branch's, as PyTorch's backward).
double smooth_l1(double d, double beta) {
  const double z = std::abs(d);
  return z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
}
double smooth_l1_grad(double d, double beta) {
  return std::abs(d) < beta ? d / beta : (d > 0 ? 1.0 : -1.0);
}
double huber(double d, double delta) {
  const double z = std::abs(d);
  return z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta);
}
double huber_grad(double d, double delta) { return std::abs(d) < delta ? d : (d > 0 ? delta : -delta); }

// Random differences on both sides of `threshold`, then the differences exactly at it (both
// signs, from a zero and from a nonzero target) and 0; exact in float32 for the thresholds used.
std::pair<Tensor, Tensor> inputs_around(double threshold, DType dtype, std::mt19937_64& rng) {
  const Tensor input = random_tensor({3, 4}, dtype, rng, -3 * threshold - 1, 3 * threshold + 1);
  const Tensor target = random_tensor({3, 4}, dtype, rng, -1, 1);
  const Tensor exact_input = tensor<double>({threshold, -threshold, 1 + threshold, 0.0}).to(dtype).reshape({1, 4});
  const Tensor exact_target = tensor<double>({0.0, 0.0, 1.0, 0.0}).to(dtype).reshape({1, 4});
  return {cat({input, exact_input}), cat({target, exact_target})};
}

// The value for every reduction, and the gradient of the sum, against the float64 pointwise
// reference, in float32 and float64.
void expect_pointwise_loss(const std::string& name, double threshold,
                           const std::function<Tensor(const Tensor&, const Tensor&, F::Reduction)>& loss,
                           double (*value)(double, double), double (*grad)(double, double)) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(name + " threshold " + std::to_string(threshold) + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype == kFloat32 ? "float32" : "float64");
    auto [input, target] = inputs_around(threshold, dtype, rng);
    const std::vector<double> x = values_of(input), y = values_of(target);
    std::vector<double> each, each_grad;
    for (std::size_t i = 0; i < x.size(); ++i) {
      each.push_back(value(x[i] - y[i], threshold));
      each_grad.push_back(grad(x[i] - y[i], threshold));
    }
    for (F::Reduction reduction : kPlainReductions) {
      const Tensor out = loss(input, target, reduction);
      EXPECT_EQ(out.dtype(), dtype);
      EXPECT_TRUE(all_close(values_of(out), reduced(each, reduction), rtol_for(dtype), atol_for(dtype)));
    }
    const Tensor leaf = input.clone().set_requires_grad(true);
    loss(leaf, target, F::Reduction::Sum).backward();
    EXPECT_TRUE(all_close(values_of(leaf.grad()), each_grad, rtol_for(dtype), atol_for(dtype)));
  }
}

TEST(SmoothL1Loss, MatchesAFloat64ReferenceOnBothSidesOfBetaAndAtIt) {
  for (double beta : {0.5, 1.0, 2.0}) {
    expect_pointwise_loss(
        "smooth_l1_loss", beta, [&](auto& x, auto& y, auto r) { return F::smooth_l1_loss(x, y, r, beta); }, smooth_l1,
        smooth_l1_grad);
  }
}

// As PyTorch, beta == 0 is l1_loss (not a division by zero).
TEST(SmoothL1Loss, BetaZeroIsL1Loss) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor input = random_tensor({4, 3}, kFloat64, rng), target = random_tensor({4, 3}, kFloat64, rng);
  for (F::Reduction reduction : kPlainReductions) {
    EXPECT_EQ(values_of(F::smooth_l1_loss(input, target, reduction, 0.0)),
              values_of(F::l1_loss(input, target, reduction)));
  }
}

TEST(HuberLoss, MatchesAFloat64ReferenceOnBothSidesOfDeltaAndAtIt) {
  for (double delta : {0.5, 1.0, 2.0}) {
    expect_pointwise_loss(
        "huber_loss", delta, [&](auto& x, auto& y, auto r) { return F::huber_loss(x, y, r, delta); }, huber,
        huber_grad);
  }
}

// PyTorch's kl_div pointwise: target * (log target - input), 0 where target == 0; with log_target,
// exp(target) * (target - input).
double kl_pointwise(double input, double target, bool log_target) {
  if (log_target) return std::exp(target) * (target - input);
  return target == 0 ? 0.0 : target * (std::log(target) - input);
}

// Log-probabilities [4, 5] as input; as target probabilities with some exact zeros, or
// log-probabilities for log_target.
std::pair<Tensor, Tensor> kl_inputs(bool log_target, std::mt19937_64& rng) {
  const Tensor input = random_tensor({4, 5}, kFloat64, rng, -3, 3).log_softmax(1);
  Tensor target = random_tensor({4, 5}, kFloat64, rng, -3, 3).softmax(1);
  if (log_target) return {input, target.log()};
  const Tensor keep = random_tensor({4, 5}, kFloat64, rng, 0, 1) > 0.3;
  keep[0][1].fill_(false);  // at least one zero
  return {input, target * keep.to(kFloat64)};
}

TEST(KLDiv, MatchesAFloat64ReferenceForEveryReductionAndBothTargetForms) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (bool log_target : {false, true}) {
    SCOPED_TRACE(log_target ? "log_target" : "probability target");
    auto [input, target] = kl_inputs(log_target, rng);
    const std::vector<double> x = values_of(input), t = values_of(target);
    std::vector<double> each;
    for (std::size_t i = 0; i < x.size(); ++i) each.push_back(kl_pointwise(x[i], t[i], log_target));
    for (F::Reduction reduction : {F::Reduction::None, F::Reduction::Sum, F::Reduction::Mean, F::Reduction::BatchMean}) {
      const Tensor out = F::kl_div(input, target, reduction, log_target);
      EXPECT_TRUE(all_close(values_of(out), reduced(each, reduction, 4.0), 1e-12, 1e-12));
      // The float32 path agrees within float32's tolerance.
      const Tensor out32 = F::kl_div(input.to(kFloat32), target.to(kFloat32), reduction, log_target);
      EXPECT_EQ(out32.dtype(), kFloat32);
      EXPECT_TRUE(all_close(values_of(out32), reduced(each, reduction, 4.0), 1e-5, 1e-5));
    }
  }
}

// A 0-D input has no batch dim: BatchMean is the sum, as PyTorch's.
TEST(KLDiv, BatchMeanOfAScalarIsItsValue) {
  const Tensor input = scalar_tensor(-0.7, {.dtype = kFloat64}), target = scalar_tensor(0.3, {.dtype = kFloat64});
  EXPECT_NEAR(F::kl_div(input, target, F::Reduction::BatchMean).item<double>(), 0.3 * (std::log(0.3) + 0.7), 1e-12);
}

// 0 * log 0 is 0 (xlogy), and a zero target passes no NaN back: input and target both get a
// gradient of 0 there, the reference's elsewhere. (PyTorch's target gradient there is xlogy's
// 0 / 0 = NaN, and its loss beside an input of -inf is NaN; hwaro leaves the term out.)
TEST(KLDiv, ZeroTargetsGiveAFiniteLossAndFiniteGradients) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto [input_values, target_values] = kl_inputs(false, rng);
  const Tensor input = input_values.clone().set_requires_grad(true);
  const Tensor target = target_values.clone().set_requires_grad(true);
  const Tensor loss = F::kl_div(input, target, F::Reduction::Sum);
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  const std::vector<double> x = values_of(input), t = values_of(target);
  std::vector<double> want_input_grad, want_target_grad;
  for (std::size_t i = 0; i < x.size(); ++i) {
    want_input_grad.push_back(t[i] == 0 ? 0.0 : -t[i]);
    want_target_grad.push_back(t[i] == 0 ? 0.0 : std::log(t[i]) + 1 - x[i]);
  }
  EXPECT_TRUE(all_close(values_of(input.grad()), want_input_grad, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(values_of(target.grad()), want_target_grad, 1e-12, 1e-12));
  // A log_softmax over masked logits gives -inf where the target is 0: no NaN.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NEAR(F::kl_div(tensor({-inf, std::log(0.5)}), tensor({0.0, 1.0}), F::Reduction::Sum).item<double>(),
              -std::log(0.5), 1e-15);
}

// Finite differences for input and target together. The targets of kl_div are kept away from 0
// (a step there would leave the log's domain); the regression losses' random differences are away
// from the kinks at +-beta and 0 but for a chance of about eps.
TEST(LossesMore, GradientsMatchFiniteDifferencesForInputAndTarget) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor x = random_tensor({3, 4}, kFloat64, rng, -3, 3).set_requires_grad(true);
  const Tensor y = random_tensor({3, 4}, kFloat64, rng, -1, 1).set_requires_grad(true);
  const Tensor log_probs = random_tensor({3, 4}, kFloat64, rng).log_softmax(1).set_requires_grad(true);
  const Tensor probs = random_tensor({3, 4}, kFloat64, rng, 0.05, 1).set_requires_grad(true);
  const Tensor log_target = random_tensor({3, 4}, kFloat64, rng).log_softmax(1).set_requires_grad(true);
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const std::vector<std::tuple<std::string, Fn, std::vector<Tensor>>> losses = {
      {"smooth_l1 beta 1", [](auto& v) { return F::smooth_l1_loss(v[0], v[1]); }, {x, y}},
      {"smooth_l1 beta 0.5 none", [](auto& v) { return F::smooth_l1_loss(v[0], v[1], F::Reduction::None, 0.5); }, {x, y}},
      {"smooth_l1 beta 0", [](auto& v) { return F::smooth_l1_loss(v[0], v[1], F::Reduction::Sum, 0.0); }, {x, y}},
      {"huber delta 1", [](auto& v) { return F::huber_loss(v[0], v[1]); }, {x, y}},
      {"huber delta 2 none", [](auto& v) { return F::huber_loss(v[0], v[1], F::Reduction::None, 2.0); }, {x, y}},
      {"kl_div", [](auto& v) { return F::kl_div(v[0], v[1], F::Reduction::BatchMean); }, {log_probs, probs}},
      {"kl_div none", [](auto& v) { return F::kl_div(v[0], v[1], F::Reduction::None); }, {log_probs, probs}},
      {"kl_div log_target", [](auto& v) { return F::kl_div(v[0], v[1], F::Reduction::Mean, true); },
       {log_probs, log_target}},
  };
  for (const auto& [name, fn, inputs] : losses) {
    const auto r = autograd::gradcheck(fn, inputs);
    EXPECT_TRUE(r.ok) << name << ": " << r.message;
  }
}

TEST(LossModulesMore, ForwardAsTheFunctionalWithTheOptionsHeld) {
  std::mt19937_64 rng(fresh_seed());
  const Tensor x = random_tensor({5, 3}, kFloat64, rng, -3, 3), y = random_tensor({5, 3}, kFloat64, rng);
  const Tensor log_probs = x.log_softmax(1), probs = y.softmax(1);
  auto same = [](const Tensor& a, const Tensor& b) { return values_of(a) == values_of(b); };
  EXPECT_TRUE(same(nn::SmoothL1Loss()->forward(x, y), F::smooth_l1_loss(x, y)));
  EXPECT_TRUE(same(nn::SmoothL1Loss(F::Reduction::None, 0.5)->forward(x, y),
                   F::smooth_l1_loss(x, y, F::Reduction::None, 0.5)));
  EXPECT_TRUE(same(nn::HuberLoss()->forward(x, y), F::huber_loss(x, y)));
  EXPECT_TRUE(same(nn::HuberLoss(F::Reduction::Sum, 2.5)->forward(x, y), F::huber_loss(x, y, F::Reduction::Sum, 2.5)));
  EXPECT_TRUE(same(nn::KLDivLoss()->forward(log_probs, probs), F::kl_div(log_probs, probs)));
  EXPECT_TRUE(same(nn::KLDivLoss(F::Reduction::BatchMean, true)->forward(log_probs, probs.log()),
                   F::kl_div(log_probs, probs.log(), F::Reduction::BatchMean, true)));
  // The options are used: a different beta, delta or target form gives a different value.
  EXPECT_FALSE(same(nn::SmoothL1Loss(F::Reduction::Mean, 0.5)->forward(x, y), F::smooth_l1_loss(x, y)));
  EXPECT_FALSE(same(nn::HuberLoss(F::Reduction::Mean, 2.5)->forward(x, y), F::huber_loss(x, y)));
  EXPECT_FALSE(same(nn::KLDivLoss(F::Reduction::Mean, true)->forward(log_probs, probs), F::kl_div(log_probs, probs)));
  EXPECT_NE(nn::KLDivLoss()->str().find("KLDivLoss"), std::string::npos);
}

TEST(LossesMore, BadArgumentsAreClearErrors) {
  const Tensor a = randn({4, 3}), b = randn({4, 3}), column = randn({4, 1});
  EXPECT_TRUE(throws_with<Error>([&] { F::smooth_l1_loss(a, b, F::Reduction::Mean, -0.5); }, "beta must be >= 0"));
  EXPECT_TRUE(throws_with<Error>([&] { F::huber_loss(a, b, F::Reduction::Mean, 0.0); }, "delta must be > 0"));
  EXPECT_TRUE(throws_with<Error>([&] { F::huber_loss(a, b, F::Reduction::Mean, -1.0); }, "delta must be > 0"));
  // Shapes: as mse_loss, no broadcasting of input against target.
  EXPECT_TRUE(throws_with<Error>([&] { F::smooth_l1_loss(a, column); }, "smooth_l1_loss: input of shape"));
  EXPECT_TRUE(throws_with<Error>([&] { F::huber_loss(column, a); }, "huber_loss: input of shape"));
  EXPECT_TRUE(throws_with<Error>([&] { F::kl_div(a, column); }, "kl_div: input of shape"));
  EXPECT_TRUE(throws_with<Error>([&] { F::kl_div(a.to(kInt64), b); }, "kl_div: expected floating point"));
  // BatchMean is kl_div's alone.
  const Tensor classes = tensor<std::int64_t>({0, 1, 2, 0});
  const std::vector<std::pair<std::string, std::function<void()>>> batch_mean_elsewhere = {
      {"mse_loss", [&] { F::mse_loss(a, b, F::Reduction::BatchMean); }},
      {"l1_loss", [&] { F::l1_loss(a, b, F::Reduction::BatchMean); }},
      {"smooth_l1_loss", [&] { F::smooth_l1_loss(a, b, F::Reduction::BatchMean); }},
      {"smooth_l1_loss", [&] { F::smooth_l1_loss(a, b, F::Reduction::BatchMean, 0.0); }},
      {"huber_loss", [&] { F::huber_loss(a, b, F::Reduction::BatchMean); }},
      {"cross_entropy", [&] { F::cross_entropy(a, classes, {.reduction = F::Reduction::BatchMean}); }},
      {"cross_entropy", [&] { F::cross_entropy(a, b.softmax(1), {.reduction = F::Reduction::BatchMean}); }},
      {"nll_loss", [&] { F::nll_loss(a, classes, {.reduction = F::Reduction::BatchMean}); }},
      {"binary_cross_entropy", [&] { F::binary_cross_entropy(a.sigmoid(), b.sigmoid(), F::Reduction::BatchMean); }},
      {"binary_cross_entropy_with_logits",
       [&] { F::binary_cross_entropy_with_logits(a, b.sigmoid(), F::Reduction::BatchMean); }},
  };
  for (const auto& [op, call] : batch_mean_elsewhere) {
    EXPECT_TRUE(throws_with<Error>(call, op + ": Reduction::BatchMean is only for kl_div")) << op;
  }
  // Devices: the ops inside check them, with the error everyone meets.
  const Tensor elsewhere = b.to(other_device());
  EXPECT_THROW(F::smooth_l1_loss(a, elsewhere), DeviceMismatchError);
  EXPECT_THROW(F::huber_loss(a, elsewhere), DeviceMismatchError);
  EXPECT_THROW(F::kl_div(a, elsewhere), DeviceMismatchError);
  EXPECT_THROW(F::kl_div(a, elsewhere, F::Reduction::Mean, true), DeviceMismatchError);
}

// As PyTorch's kl_div ("Integral inputs not supported"): an integer or bool target is refused too,
// in both target forms, rather than read as probabilities.
TEST(KLDiv, AnIntegralTargetIsAnError) {
  const Tensor log_probs = randn({2, 3}).log_softmax(1);
  const Tensor counts = tensor<std::int64_t>({0, 1, 0, 1, 0, 0}).reshape({2, 3});
  for (bool log_target : {false, true}) {
    EXPECT_TRUE(throws_with<Error>([&] { F::kl_div(log_probs, counts, F::Reduction::Sum, log_target); },
                                   "kl_div: expected a floating point target"))
        << log_target;
    EXPECT_TRUE(throws_with<Error>([&] { F::kl_div(log_probs, counts > 0, F::Reduction::Sum, log_target); },
                                   "kl_div: expected a floating point target"))
        << log_target;
  }
}

// Every defined gradient clamped in place to [-c, c]; parameters without one are skipped; NaN stays.
TEST(ClipGradValue, ClampsEveryDefinedGradientInPlace) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double clip : {0.0, 0.75, 5.0}) {  // exact in float32, so the clamp is too
    SCOPED_TRACE("clip_value " + std::to_string(clip));
    std::vector<Tensor> params;
    for (DType dtype : {kFloat32, kFloat64}) {
      Tensor w = zeros({3, 4}, {.dtype = dtype}).set_requires_grad(true);
      w.mutable_grad() = random_tensor({3, 4}, dtype, rng, -3, 3);
      params.push_back(w);
      params.push_back(zeros({2}, {.dtype = dtype}).set_requires_grad(true));  // no gradient: skipped
    }
    params[0].mutable_grad()[1][2].fill_(std::nan(""));
    params.push_back(Tensor());  // an undefined parameter: skipped
    std::vector<std::vector<double>> want;
    std::vector<const void*> storage;
    for (std::size_t k : {0u, 2u}) {
      std::vector<double> g = values_of(params[k].grad());
      for (double& v : g) v = std::isnan(v) ? v : std::min(std::max(v, -clip), clip);
      want.push_back(g);
      storage.push_back(params[k].grad().data_ptr());
    }
    nn::utils::clip_grad_value_(params, clip);
    EXPECT_TRUE(all_close(values_of(params[0].grad()), want[0], 0, 0));
    EXPECT_TRUE(all_close(values_of(params[2].grad()), want[1], 0, 0));
    EXPECT_EQ(params[0].grad().data_ptr(), storage[0]) << "not in place";
    EXPECT_EQ(params[2].grad().data_ptr(), storage[1]) << "not in place";
    EXPECT_FALSE(params[1].grad().defined());
    EXPECT_FALSE(params[3].grad().defined());
  }
}

// PyTorch does not check the sign; a negative clip_value would set every element to it
// (clamp with min > max), so here it is an error that changes nothing.
TEST(ClipGradValue, ANegativeClipValueIsAnErrorAndChangesNothing) {
  std::mt19937_64 rng(fresh_seed());
  Tensor w = zeros({5}).set_requires_grad(true);
  w.mutable_grad() = random_tensor({5}, kFloat32, rng);
  const std::vector<double> before = values_of(w.grad());
  EXPECT_TRUE(throws_with<Error>([&] { nn::utils::clip_grad_value_({w}, -0.5); }, "expected clip_value >= 0"));
  EXPECT_TRUE(throws_with<Error>([&] { nn::utils::clip_grad_value_({w}, std::nan("")); }, "expected clip_value >= 0"));
  EXPECT_EQ(values_of(w.grad()), before);
}

}  // namespace
}  // namespace hwaro::test
