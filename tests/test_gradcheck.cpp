// Every differentiable op's gradient against finite differences in float64, on fresh random
// inputs, with broadcast and non-contiguous operands where the op takes them.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Case {
  std::string name;
  std::vector<std::vector<std::int64_t>> shapes;
  Fn fn;
  double lo = -2.0, hi = 2.0;  // the inputs' range (positive for log, sqrt, ...)
  bool non_contiguous = false;  // the inputs as strided views
};

std::vector<Case> cases() {
  return {
      {"neg", {{3, 4}}, [](auto& v) { return -v[0]; }},
      {"abs", {{3, 4}}, [](auto& v) { return v[0].abs(); }},
      {"exp", {{3, 4}}, [](auto& v) { return v[0].exp(); }},
      {"expm1", {{3, 4}}, [](auto& v) { return v[0].expm1(); }},
      {"log", {{3, 4}}, [](auto& v) { return v[0].log(); }, 0.5, 3.0},
      {"log1p", {{3, 4}}, [](auto& v) { return v[0].log1p(); }, -0.5, 3.0},
      {"sqrt", {{3, 4}}, [](auto& v) { return v[0].sqrt(); }, 0.5, 3.0},
      {"rsqrt", {{3, 4}}, [](auto& v) { return v[0].rsqrt(); }, 0.5, 3.0},
      {"tanh", {{3, 4}}, [](auto& v) { return v[0].tanh(); }},
      {"sigmoid", {{3, 4}}, [](auto& v) { return v[0].sigmoid(); }},
      {"relu", {{3, 4}}, [](auto& v) { return v[0].relu(); }},
      {"gelu", {{3, 4}}, [](auto& v) { return v[0].gelu(); }},
      {"gelu_tanh", {{3, 4}}, [](auto& v) { return v[0].gelu(true); }},
      {"silu", {{3, 4}}, [](auto& v) { return v[0].silu(); }},
      {"clamp", {{4, 5}}, [](auto& v) { return v[0].clamp(-0.5, 0.7); }},
      {"clamp_min", {{4, 5}}, [](auto& v) { return v[0].clamp(0.1); }},
      {"pow_scalar", {{3, 4}}, [](auto& v) { return v[0].pow(3.0); }},
      {"pow_fractional", {{3, 4}}, [](auto& v) { return v[0].pow(1.5); }, 0.5, 2.0},
      {"add_broadcast", {{3, 4}, {4}}, [](auto& v) { return v[0] + v[1]; }},
      {"add_alpha", {{3, 1}, {1, 4}}, [](auto& v) { return v[0].add(v[1], 2.5); }},
      {"sub_broadcast", {{2, 3, 4}, {3, 1}}, [](auto& v) { return v[0] - v[1]; }},
      {"mul_broadcast", {{3, 4}, {1, 4}}, [](auto& v) { return v[0] * v[1]; }},
      {"mul_scalar", {{3, 4}}, [](auto& v) { return v[0] * 1.7; }},
      {"rsub_scalar", {{3, 4}}, [](auto& v) { return 2.0 - v[0]; }},
      {"div_broadcast", {{3, 4}, {4}}, [](auto& v) { return v[0] / v[1]; }, 0.5, 2.0},
      {"rdiv_scalar", {{3, 4}}, [](auto& v) { return 2.0 / v[0]; }, 0.5, 2.0},
      {"pow_tensor", {{3, 4}, {3, 4}}, [](auto& v) { return v[0].pow(v[1]); }, 0.5, 2.0},
      {"maximum", {{3, 4}, {4}}, [](auto& v) { return maximum(v[0], v[1]); }},
      {"minimum", {{3, 4}, {3, 4}}, [](auto& v) { return minimum(v[0], v[1]); }},
      {"where", {{3, 4}, {3, 4}}, [](auto& v) { return where(v[0] > 0, v[0], v[1] * 2); }},
      {"masked_fill", {{3, 4}}, [](auto& v) { return v[0].masked_fill(v[0] < 0, 0.5); }},
      {"sum_all", {{3, 4}}, [](auto& v) { return v[0].sum(); }},
      {"sum_dim", {{2, 3, 4}}, [](auto& v) { return v[0].sum({1}); }},
      {"sum_dims_keepdim", {{2, 3, 4}}, [](auto& v) { return v[0].sum({0, -1}, true); }},
      {"mean_dim", {{2, 3, 4}}, [](auto& v) { return v[0].mean({2}); }},
      {"var", {{3, 5}}, [](auto& v) { return v[0].var({1}); }},
      {"std", {{3, 5}}, [](auto& v) { return v[0].std({0}); }},
      {"norm", {{3, 5}}, [](auto& v) { return v[0].norm(2, {1}); }},
      {"prod_all", {{3, 4}}, [](auto& v) { return v[0].prod(); }, 0.5, 1.5},
      {"prod_dim", {{2, 3, 4}}, [](auto& v) { return v[0].prod(1); }},
      {"prod_dim_keepdim", {{2, 3, 4}}, [](auto& v) { return v[0].prod(-1, true); }},
      {"amax", {{3, 5}}, [](auto& v) { return v[0].amax({1}); }},
      {"max_all", {{3, 5}}, [](auto& v) { return v[0].max(); }},
      {"min_dim", {{3, 5}}, [](auto& v) { return std::get<0>(v[0].min(0)); }},
      {"logsumexp", {{3, 5}}, [](auto& v) { return v[0].logsumexp({1}); }},
      {"softmax", {{3, 5}}, [](auto& v) { return v[0].softmax(1); }},
      {"softmax_dim0", {{4, 3, 2}}, [](auto& v) { return v[0].softmax(0); }},
      {"log_softmax", {{3, 5}}, [](auto& v) { return v[0].log_softmax(-1); }},
      {"mm", {{3, 4}, {4, 5}}, [](auto& v) { return mm(v[0], v[1]); }},
      {"mm_transposed", {{4, 3}, {5, 4}}, [](auto& v) { return mm(v[0].t(), v[1].t()); }},
      {"bmm", {{2, 3, 4}, {2, 4, 5}}, [](auto& v) { return bmm(v[0], v[1]); }},
      {"matmul_broadcast", {{2, 3, 4}, {4, 5}}, [](auto& v) { return matmul(v[0], v[1]); }},
      {"matmul_batched", {{2, 1, 3, 4}, {3, 4, 2}}, [](auto& v) { return matmul(v[0], v[1]); }},
      {"matmul_vector", {{4}, {4, 3}}, [](auto& v) { return matmul(v[0], v[1]); }},
      {"matmul_matrix_vector", {{3, 4}, {4}}, [](auto& v) { return matmul(v[0], v[1]); }},
      {"matmul_dot", {{5}, {5}}, [](auto& v) { return matmul(v[0], v[1]); }},
      {"addmm", {{5}, {3, 4}, {4, 5}}, [](auto& v) { return addmm(v[0], v[1], v[2], 0.5, 2.0); }},
      {"view", {{3, 4}}, [](auto& v) { return v[0].view({2, 6}) * 1.5; }},
      {"reshape", {{3, 4}}, [](auto& v) { return v[0].t().reshape({12}); }},
      {"flatten", {{2, 3, 4}}, [](auto& v) { return v[0].flatten(1); }},
      {"squeeze_unsqueeze", {{3, 1, 4}}, [](auto& v) { return v[0].squeeze(1).unsqueeze(0); }},
      {"transpose", {{2, 3, 4}}, [](auto& v) { return v[0].transpose(0, 2); }},
      {"permute", {{2, 3, 4}}, [](auto& v) { return v[0].permute({1, 2, 0}); }},
      {"expand", {{3, 1}}, [](auto& v) { return v[0].expand({2, 3, 4}); }},
      {"narrow", {{5, 4}}, [](auto& v) { return v[0].narrow(0, 1, 3); }},
      {"slice_step", {{7, 3}}, [](auto& v) { return v[0].slice(0, 1, 6, 2); }},
      {"select", {{4, 3}}, [](auto& v) { return v[0].select(1, 2); }},
      {"split", {{5, 3}}, [](auto& v) { auto p = v[0].split(2); return p[0].sum() * p[2].sum() + p[1]; }},
      {"unbind", {{3, 2}}, [](auto& v) { auto p = v[0].unbind(); return p[0] * p[1] - p[2]; }},
      {"cat", {{2, 3}, {4, 3}}, [](auto& v) { return cat({v[0], v[1]}, 0); }},
      {"stack", {{2, 3}, {2, 3}}, [](auto& v) { return stack({v[0], v[1]}, 1); }},
      {"clone_contiguous", {{3, 4}}, [](auto& v) { return v[0].t().contiguous() * v[0].t().clone(); }},
      {"index_select", {{5, 3}},
       [](auto& v) { return v[0].index_select(0, tensor<std::int64_t>({4, 0, 4, 2})); }},
      {"gather", {{3, 4}},
       [](auto& v) { return v[0].gather(1, tensor<std::int64_t>({{0, 3}, {1, 1}, {2, 0}})); }},
      {"scatter", {{3, 4}, {3, 2}},
       [](auto& v) { return v[0].scatter(1, tensor<std::int64_t>({{0, 3}, {1, 2}, {2, 0}}), v[1]); }},
      {"scatter_add", {{3, 4}, {3, 2}},
       [](auto& v) { return v[0].scatter_add(1, tensor<std::int64_t>({{0, 0}, {1, 2}, {3, 0}}), v[1]); }},
      {"composite_mlp", {{4, 6}, {6, 5}, {5}},
       [](auto& v) { return (matmul(v[0], v[1]) + v[2]).relu().log_softmax(1); }},
  };
}

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class Gradcheck : public ::testing::TestWithParam<Case> {};

TEST_P(Gradcheck, MatchesFiniteDifferences) {
  const Case& c = GetParam();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (bool strided : {false, true}) {
    std::vector<Tensor> inputs;
    for (const auto& shape : c.shapes) {
      Tensor x = random_tensor(shape, kFloat64, rng, c.lo, c.hi);
      if (strided) x = non_contiguous_copy(x);
      x.set_requires_grad(true);
      inputs.push_back(x);
    }
    const autograd::GradcheckResult r = autograd::gradcheck(c.fn, inputs);
    EXPECT_TRUE(r.ok) << c.name << (strided ? " (non-contiguous inputs): " : ": ") << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOp, Gradcheck, ::testing::ValuesIn(cases()),
                         [](const auto& test_info) { return test_info.param.name; });

// gradcheck itself must fail on a wrong gradient, or the suite above proves nothing.
// prod's gradient is the product of the other elements, also where dividing the product by the
// element would give NaN: a row with one zero (only the zero gets a gradient), one with two
// zeros (nothing does), one with none.
TEST(ProdGradient, AtZerosIsTheProductOfTheOthers) {
  Tensor x = tensor({1.5, 0.0, -2.0, 3.0, 0.0, 0.0, 0.5, -1.0, 2.0}).reshape({3, 3}).set_requires_grad(true);
  x.prod(1).sum().backward();
  EXPECT_EQ(values_of(x.grad()), (std::vector<double>{0, -3, 0, 0, 0, 0, -2, 1, -0.5}));
  Tensor y = x.detach().clone().set_requires_grad(true);
  y.prod().backward();  // two zeros in all: nothing
  EXPECT_EQ(values_of(y.grad()), std::vector<double>(9, 0.0));
  const auto r = autograd::gradcheck([](auto& v) { return v[0].prod(1); }, {x.detach().clone().set_requires_grad(true)});
  EXPECT_TRUE(r.ok) << r.message;
}

// d/da a^b is b a^(b-1), and 0 where b == 0 (a^0 is constant), as PyTorch's: also at a == 0,
// where b * a^(b-1) would be 0 * inf = NaN.
TEST(PowGradient, IsZeroWhereTheExponentIsZero) {
  std::mt19937_64 rng(fresh_seed());
  Tensor a = random_tensor({12}, kFloat64, rng, 0.5, 2.0);
  Tensor b = random_tensor({12}, kFloat64, rng, 1.0, 2.0);
  for (std::int64_t i : {0, 1, 5}) a.select(0, i).fill_(0.0);
  for (std::int64_t i : {0, 2, 5, 7}) b.select(0, i).fill_(0.0);
  a.set_requires_grad(true);
  a.pow(b).sum().backward();
  const std::vector<double> av = values_of(a), bv = values_of(b);
  std::vector<double> expected;
  for (std::size_t i = 0; i < av.size(); ++i) expected.push_back(bv[i] == 0 ? 0.0 : bv[i] * std::pow(av[i], bv[i] - 1));
  EXPECT_TRUE(all_close(values_of(a.grad()), expected, 1e-12, 1e-12));
}

TEST(GradcheckItself, RejectsAWrongGradient) {
  std::mt19937_64 rng(fresh_seed());
  Tensor x = random_tensor({3}, kFloat64, rng, 0.5, 2.0).set_requires_grad(true);
  // d/dx of x*x is 2x; detaching one factor gives x instead, which gradcheck must catch.
  const auto r = autograd::gradcheck([](const std::vector<Tensor>& v) { return v[0] * v[0].detach(); }, {x});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("finite differences"), std::string::npos);
}

TEST(GradcheckItself, RefusesFloat32Inputs) {
  Tensor x = randn({3}).set_requires_grad(true);
  EXPECT_TRUE(throws_with<Error>([&] { autograd::gradcheck([](auto& v) { return v[0] * 2; }, {x}); }, "float64"));
}

}  // namespace
}  // namespace hwaro::test
