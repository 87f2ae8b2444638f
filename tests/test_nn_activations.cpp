// The activations beyond relu/gelu/silu (leaky_relu, elu, selu, softplus, hardtanh, relu6,
// hardsigmoid, hardswish, mish, logsigmoid),
// normalize and their modules: values against float64 formulas on fresh random inputs in every
// floating dtype, gradients by finite differences and at the kinks as PyTorch's backward gives
// them, finite gradients where an untaken branch overflows, printouts and errors.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace F = nn::functional;
using Fn = std::function<Tensor(const Tensor&)>;
using Ref = std::function<double(double)>;

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

double elu_ref(double x, double alpha) { return x > 0 ? x : alpha * std::expm1(x); }
double softplus_ref(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}

struct Activation {
  std::string name;
  Fn fn;
  Ref ref;
  double lo, hi;  // the inputs' range
};

std::vector<Activation> activations() {
  return {
      {"leaky_relu", [](const Tensor& x) { return F::leaky_relu(x); }, [](double v) { return v > 0 ? v : 0.01 * v; },
       -3, 3},
      {"leaky_relu_0.2", [](const Tensor& x) { return F::leaky_relu(x, 0.2); },
       [](double v) { return v > 0 ? v : 0.2 * v; }, -3, 3},
      {"elu", [](const Tensor& x) { return F::elu(x); }, [](double v) { return elu_ref(v, 1.0); }, -4, 3},
      {"elu_alpha", [](const Tensor& x) { return F::elu(x, 0.5); }, [](double v) { return elu_ref(v, 0.5); }, -4, 3},
      {"selu", [](const Tensor& x) { return F::selu(x); },
       [](double v) { return kSeluScale * elu_ref(v, kSeluAlpha); }, -4, 3},
      {"softplus", [](const Tensor& x) { return F::softplus(x); }, [](double v) { return softplus_ref(v, 1, 20); },
       -6, 6},
      // beta 2 and threshold 3: the linear part above x = 1.5 is in range.
      {"softplus_beta_threshold", [](const Tensor& x) { return F::softplus(x, 2.0, 3.0); },
       [](double v) { return softplus_ref(v, 2, 3); }, -3, 3},
      {"hardtanh", [](const Tensor& x) { return F::hardtanh(x); }, [](double v) { return std::clamp(v, -1.0, 1.0); },
       -3, 3},
      {"hardtanh_range", [](const Tensor& x) { return F::hardtanh(x, -0.5, 2.0); },
       [](double v) { return std::clamp(v, -0.5, 2.0); }, -3, 3},
      {"relu6", [](const Tensor& x) { return F::relu6(x); }, [](double v) { return std::clamp(v, 0.0, 6.0); }, -3, 9},
      {"hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x); },
       [](double v) { return std::clamp(v / 6 + 0.5, 0.0, 1.0); }, -5, 5},
      {"hardswish", [](const Tensor& x) { return F::hardswish(x); },
       [](double v) { return v * std::clamp(v + 3, 0.0, 6.0) / 6; }, -5, 5},
      {"mish", [](const Tensor& x) { return F::mish(x); },
       [](double v) { return v * std::tanh(softplus_ref(v, 1, 20)); }, -5, 5},
      {"logsigmoid", [](const Tensor& x) { return F::logsigmoid(x); },
       [](double v) { return -softplus_ref(-v, 1, 20); }, -8, 8},
  };
}

TEST(Activations, ValuesMatchTheFloat64FormulasInEveryFloatingDtype) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Activation& a : activations()) {
    for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      SCOPED_TRACE(a.name + " " + std::string(dtype_name(dt)));
      for (bool strided : {false, true}) {
        Tensor x = random_tensor({7, 9}, dt, rng, a.lo, a.hi);
        if (strided) x = non_contiguous_copy(x);
        const Tensor y = a.fn(x);
        EXPECT_EQ(y.dtype(), dt);
        EXPECT_EQ(y.sizes(), x.sizes());
        std::vector<double> want = values_of(x);
        for (double& v : want) v = a.ref(v);
        // The reference of the input as rounded to dt, then the result rounded once more.
        EXPECT_TRUE(all_close(values_of(y), want, rtol_for(dt), atol_for(dt)));
      }
    }
  }
}

TEST(Activations, GradientsMatchFiniteDifferences) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Activation& a : activations()) {
    for (bool strided : {false, true}) {
      Tensor x = random_tensor({4, 5}, kFloat64, rng, a.lo, a.hi);
      if (strided) x = non_contiguous_copy(x);
      x.set_requires_grad(true);
      const autograd::GradcheckResult r =
          autograd::gradcheck([&](const std::vector<Tensor>& v) { return a.fn(v[0]); }, {x});
      EXPECT_TRUE(r.ok) << a.name << (strided ? " (strided): " : ": ") << r.message;
    }
  }
}

// d/dx at each kink, as PyTorch's backward formulas give it: leaky_relu and elu take the
// negative side at 0 (x > 0 is the positive one); hardtanh passes nothing at its ends;
// softplus at beta x == threshold is still the smooth side.
TEST(Activations, GradientAtTheKinksIsPyTorchs) {
  const auto grad_at = [](const Fn& fn, double v) {
    Tensor x = tensor({v}).set_requires_grad(true);
    fn(x).sum().backward();
    return x.grad().item<double>();
  };
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::leaky_relu(x, 0.2); }, 0.0), 0.2);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::elu(x, 0.5); }, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardtanh(x); }, -1.0), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardtanh(x); }, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardtanh(x); }, 0.999), 1.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::relu6(x); }, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::relu6(x); }, 6.0), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::relu6(x); }, 5.5), 1.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardsigmoid(x); }, -3.0), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardsigmoid(x); }, 3.0), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardsigmoid(x); }, 2.0), 1.0 / 6);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardswish(x); }, -3.0), -0.5);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardswish(x); }, 3.0), 1.5);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardswish(x); }, -3.5), 0.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::hardswish(x); }, 4.0), 1.0);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::logsigmoid(x); }, 0.0), 0.5);
  const double sigmoid3 = 1.0 / (1.0 + std::exp(-3.0));
  EXPECT_NEAR(grad_at([](const Tensor& x) { return F::softplus(x, 2.0, 3.0); }, 1.5), sigmoid3, 1e-15);
  EXPECT_DOUBLE_EQ(grad_at([](const Tensor& x) { return F::softplus(x, 2.0, 3.0); }, 1.6), 1.0);
}

// The untaken branch overflows for these inputs (e^1000); its zero gradient must stay zero, not
// 0 * inf = NaN, and the values must be the taken branch's.
TEST(Activations, LargeInputsGiveFiniteValuesAndGradients) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = tensor({1000.0, -1000.0, 88.0, -88.0}, {.dtype = dt}).set_requires_grad(true);
    const std::vector<std::pair<std::string, Fn>> fns = {
        {"elu", [](const Tensor& t) { return F::elu(t); }},
        {"selu", [](const Tensor& t) { return F::selu(t); }},
        {"softplus", [](const Tensor& t) { return F::softplus(t); }},
        {"softplus_beta", [](const Tensor& t) { return F::softplus(t, 10.0, 5.0); }},
        {"mish", [](const Tensor& t) { return F::mish(t); }},
        {"logsigmoid", [](const Tensor& t) { return F::logsigmoid(t); }},
    };
    for (const auto& [name, fn] : fns) {
      x.mutable_grad() = Tensor();
      const Tensor y = fn(x);
      for (double v : values_of(y)) EXPECT_TRUE(std::isfinite(v)) << name;
      y.sum().backward();
      for (double g : values_of(x.grad())) EXPECT_TRUE(std::isfinite(g)) << name;
    }
  }
  EXPECT_EQ(values_of(F::softplus(tensor({1000.f})))[0], 1000.0);
  EXPECT_EQ(values_of(F::elu(tensor({-1000.f})))[0], -1.0);
  EXPECT_EQ(values_of(F::logsigmoid(tensor({-1000.f})))[0], -1000.0);
  EXPECT_NEAR(values_of(F::logsigmoid(tensor({30.f})))[0], -std::exp(-30.0), 1e-6 * std::exp(-30.0));
  // softplus of a tiny negative input keeps its relative precision (log1p, not log(1 + .)).
  EXPECT_NEAR(values_of(F::softplus(tensor({-30.f})))[0], std::exp(-30.0), 1e-6 * std::exp(-30.0));
}

// float16 is computed in float32: e^11.1 is already beyond float16's range, so a float16 e^x
// would make softplus infinite below its threshold of 20.
TEST(Activations, SoftplusInFloat16DoesNotOverflowBelowTheThreshold) {
  const Tensor x = tensor({12.0, 15.0, 19.5}).to(kFloat16);
  const std::vector<double> y = values_of(F::softplus(x));
  const std::vector<double> xs = values_of(x);
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(y[i], softplus_ref(xs[i], 1, 20), 0.02) << xs[i];
}

TEST(Activations, NanPropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = tensor({nan, 0.5});
  for (const Activation& a : activations()) {
    const std::vector<double> y = values_of(a.fn(x));
    EXPECT_TRUE(std::isnan(y[0])) << a.name;
    EXPECT_FALSE(std::isnan(y[1])) << a.name;
  }
}

TEST(Activations, BadInputsAreClearErrors) {
  const Tensor ints = tensor<std::int64_t>({1, -2});
  for (const auto& [name, fn] : std::vector<std::pair<std::string, Fn>>{
           {"leaky_relu", [](const Tensor& t) { return F::leaky_relu(t); }},
           {"elu", [](const Tensor& t) { return F::elu(t); }},
           {"selu", [](const Tensor& t) { return F::selu(t); }},
           {"softplus", [](const Tensor& t) { return F::softplus(t); }},
           {"hardtanh", [](const Tensor& t) { return F::hardtanh(t); }},
           {"relu6", [](const Tensor& t) { return F::relu6(t); }},
           {"hardsigmoid", [](const Tensor& t) { return F::hardsigmoid(t); }},
           {"hardswish", [](const Tensor& t) { return F::hardswish(t); }},
           {"mish", [](const Tensor& t) { return F::mish(t); }},
           {"logsigmoid", [](const Tensor& t) { return F::logsigmoid(t); }},
           {"normalize", [](const Tensor& t) { return F::normalize(t, 2.0, 0); }},
       }) {
    EXPECT_TRUE(throws_with<Error>([&] { fn(ints); }, "expected a floating point input, got int64")) << name;
  }
  EXPECT_TRUE(throws_with<Error>([] { F::hardtanh(ones({2}), 1.0, -1.0); }, "min_val (1) must not be greater"));
  EXPECT_TRUE(throws_with<Error>([] { F::softplus(ones({2}), 0.0); }, "beta must not be 0"));
  EXPECT_TRUE(throws_with<Error>([] { nn::Hardtanh(2.0, 1.0); }, "Hardtanh: min_val (2) must not be greater"));
  EXPECT_TRUE(throws_with<Error>([] { nn::Softplus(0.0); }, "Softplus: beta must not be 0"));
}

// ---------------------------------------------------------------- normalize

TEST(Normalize, MatchesTheFloat64ReferenceAndItsGradient) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor x = random_tensor({3, 4, 5}, kFloat64, rng);
  const std::vector<double> xs = values_of(x);
  for (double p : {2.0, 1.0, 3.0}) {
    SCOPED_TRACE("p " + std::to_string(p));
    // Along dim 1: each (i, k) column of 4 values divided by its p-norm.
    std::vector<double> want(xs.size());
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 5; ++k) {
        double s = 0;
        for (int j = 0; j < 4; ++j) s += std::pow(std::abs(xs[(i * 4 + j) * 5 + k]), p);
        const double norm = std::max(std::pow(s, 1.0 / p), 1e-12);
        for (int j = 0; j < 4; ++j) want[(i * 4 + j) * 5 + k] = xs[(i * 4 + j) * 5 + k] / norm;
      }
    }
    EXPECT_TRUE(all_close(values_of(F::normalize(x, p)), want, 1e-12, 1e-12));
    Tensor leaf = x.clone().set_requires_grad(true);
    const autograd::GradcheckResult r =
        autograd::gradcheck([&](const std::vector<Tensor>& v) { return F::normalize(v[0], p); }, {leaf});
    EXPECT_TRUE(r.ok) << r.message;
  }
  EXPECT_TRUE(all_close(values_of(F::normalize(x, 2.0, -1)), values_of(x / x.norm(2, {2}, true)), 1e-12, 1e-12));
}

// A zero row stays zero, and its gradient is PyTorch's g / eps (the clamped denominator is a
// constant there), not NaN from the norm's derivative at 0.
TEST(Normalize, AZeroRowStaysZeroWithAFiniteGradient) {
  Tensor x = tensor({0.0, 0.0, 0.0, 3.0, 4.0, 0.0}).reshape({2, 3}).set_requires_grad(true);
  const Tensor y = F::normalize(x, 2.0, 1, 1e-3);
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 0, 0, 0.6, 0.8, 0}));
  y.sum().backward();
  const std::vector<double> g = values_of(x.grad());
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(g[i], 1e3);
  // Second row: d/dx_j sum_i x_i / |x| = 1/|x| - x_j sum_i x_i / |x|^3, |x| = 5, sum = 7.
  EXPECT_NEAR(g[3], 0.2 - 3.0 * 7.0 / 125.0, 1e-15);
  EXPECT_NEAR(g[4], 0.2 - 4.0 * 7.0 / 125.0, 1e-15);
  EXPECT_NEAR(g[5], 0.2, 1e-15);
}

// PyTorch's norm_backward and std_backward give 0 where the norm or deviation is 0; the root's
// infinite derivative there made it NaN.
TEST(Normalize, NormAndStdHaveAZeroGradientAtZero) {
  for (double p : {2.0, 3.0}) {
    Tensor x = zeros({2, 3}, {.dtype = kFloat64}).set_requires_grad(true);
    x.norm(p, {1}).sum().backward();
    for (double g : values_of(x.grad())) EXPECT_EQ(g, 0.0) << "norm, p " << p;
  }
  Tensor c = full({4}, 2.5, {.dtype = kFloat64}).set_requires_grad(true);
  const Tensor s = c.std({0});
  EXPECT_EQ(s.item<double>(), 0.0);
  s.backward();
  for (double g : values_of(c.grad())) EXPECT_EQ(g, 0.0) << "std";
  // A negative p: the sum of |x|^p is 0 only for infinite elements, and the norm is then
  // 0^(1/p) = inf, as torch.linalg.vector_norm's.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(tensor({inf, -inf}).norm(-1.0).item<double>(), inf);
  EXPECT_NEAR(tensor({2.0, 2.0}).norm(-1.0).item<double>(), 1.0, 1e-15);
  // Away from zero the gradients are unchanged: x / |x| for the 2-norm.
  Tensor v = tensor({3.0, -4.0}).set_requires_grad(true);
  v.norm().backward();
  EXPECT_TRUE(all_close(values_of(v.grad()), {0.6, -0.8}, 1e-15, 1e-15));
}

// ---------------------------------------------------------------- modules

TEST(ActivationModules, ForwardIsTheFunctionalFormAndPrintsAsPyTorch) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor x = random_tensor({3, 8}, kFloat32, rng, -8, 8);
  EXPECT_TRUE(equal(nn::LeakyReLU()(x), F::leaky_relu(x)));
  EXPECT_TRUE(equal(nn::LeakyReLU(0.3)(x), F::leaky_relu(x, 0.3)));
  EXPECT_TRUE(equal(nn::ELU()(x), F::elu(x)));
  EXPECT_TRUE(equal(nn::ELU(0.7)(x), F::elu(x, 0.7)));
  EXPECT_TRUE(equal(nn::SELU()(x), F::selu(x)));
  EXPECT_TRUE(equal(nn::Softplus()(x), F::softplus(x)));
  EXPECT_TRUE(equal(nn::Softplus(2.0, 5.0)(x), F::softplus(x, 2.0, 5.0)));
  EXPECT_TRUE(equal(nn::Hardtanh()(x), F::hardtanh(x)));
  EXPECT_TRUE(equal(nn::Hardtanh(-2.0, 3.0)(x), F::hardtanh(x, -2.0, 3.0)));
  EXPECT_TRUE(equal(nn::ReLU6()(x), F::relu6(x)));
  EXPECT_TRUE(equal(nn::LogSoftmax(1)(x), x.log_softmax(1)));
  EXPECT_TRUE(equal(nn::Hardsigmoid()(x), F::hardsigmoid(x)));
  EXPECT_TRUE(equal(nn::Hardswish()(x), F::hardswish(x)));
  EXPECT_TRUE(equal(nn::Mish()(x), F::mish(x)));
  EXPECT_TRUE(equal(nn::LogSigmoid()(x), F::logsigmoid(x)));
  EXPECT_EQ(nn::Hardswish()->str(), "Hardswish()");
  EXPECT_EQ(nn::Mish()->clone_module()->str(), "Mish()");
  EXPECT_FALSE(equal(nn::LogSoftmax(0)(x), x.log_softmax(1)));
  const Tensor same = nn::Identity()(x);
  EXPECT_EQ(same.data_ptr<float>(), x.data_ptr<float>());

  EXPECT_EQ(nn::LeakyReLU()->str(), "LeakyReLU(negative_slope=0.01)");
  EXPECT_EQ(nn::ELU(0.5)->str(), "ELU(alpha=0.5)");
  EXPECT_EQ(nn::SELU()->str(), "SELU()");
  EXPECT_EQ(nn::Softplus()->str(), "Softplus(beta=1, threshold=20)");
  EXPECT_EQ(nn::Hardtanh()->str(), "Hardtanh(min_val=-1, max_val=1)");
  EXPECT_EQ(nn::ReLU6()->str(), "ReLU6()");
  EXPECT_EQ(nn::LogSoftmax(1)->str(), "LogSoftmax(dim=1)");
  EXPECT_EQ(nn::Identity()->str(), "Identity()");

  // Replicas (DataParallel's clone_module) keep the settings.
  const auto clone = nn::Softplus(2.0, 5.0)->clone_module();
  EXPECT_TRUE(equal(clone->forward(x), F::softplus(x, 2.0, 5.0)));
  EXPECT_EQ(nn::Hardtanh(-2.0, 3.0)->clone_module()->str(), "Hardtanh(min_val=-2, max_val=3)");
  EXPECT_EQ(nn::LeakyReLU(0.3)->clone_module()->str(), "LeakyReLU(negative_slope=0.3)");
  EXPECT_EQ(nn::ELU(0.7)->clone_module()->str(), "ELU(alpha=0.7)");
  EXPECT_EQ(nn::LogSoftmax(0)->clone_module()->str(), "LogSoftmax(dim=0)");
}

// The modules in a Sequential learn a problem that needs their non-linearity: the class is how
// many of the first two features are positive.
TEST(ActivationModules, TrainAMlpWithThemInASequential) {
  manual_seed(7);
  auto net = nn::Sequential(nn::Linear(4, 16), nn::LeakyReLU(0.1), nn::Linear(16, 16), nn::ELU(), nn::Linear(16, 3),
                            nn::LogSoftmax(1));
  std::mt19937_64 rng(fresh_seed());
  const Tensor x = random_tensor({64, 4}, kFloat32, rng);
  const std::vector<double> xs = values_of(x);
  std::vector<std::int64_t> labels;
  for (int i = 0; i < 64; ++i) labels.push_back((xs[i * 4] > 0 ? 1 : 0) + (xs[i * 4 + 1] > 0 ? 1 : 0));
  const Tensor target = tensor(labels);
  optim::Adam opt(net->parameters(), {.lr = 0.02});
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    opt.zero_grad();
    const Tensor loss = F::nll_loss(net(x), target);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, first * 0.4);
}

}  // namespace
}  // namespace hwaro::test
