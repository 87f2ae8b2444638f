// Optimisers step by step against float64 references of torch.optim's update rules, on fresh
// random parameters and gradients; a group of parameters in one fused launch.
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>

#include "support/optim_reference.h"
#include "support/test_support.h"
#include "testing/test_backend.h"

namespace hwaro::test {
namespace {

constexpr int kSteps = 6;
constexpr std::int64_t kSize = 7;

// Gradients for each step, fixed up front so the reference sees the same ones.
std::vector<std::vector<double>> gradients(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> g(kSteps, std::vector<double>(kSize));
  for (auto& step : g) {
    for (double& v : step) v = u(rng);
  }
  return g;
}

// Runs opt for kSteps with the given gradients; returns the parameter after each step. A contiguous
// float64 parameter takes the fused kernel (OpId::AdamStep / SgdStep); a strided one the composite path.
template <typename Opt, typename Options>
std::vector<std::vector<double>> run(const std::vector<double>& start, const std::vector<std::vector<double>>& grads,
                                     Options options, bool contiguous) {
  Tensor p = (contiguous ? tensor(start) : non_contiguous_copy(tensor(start))).set_requires_grad(true);
  Opt opt({p}, options);
  std::vector<std::vector<double>> out;
  for (const auto& g : grads) {
    p.mutable_grad() = tensor(g);
    opt.step();
    out.push_back(values_of(p));
  }
  return out;
}

struct SgdCase {
  double momentum, dampening, weight_decay;
  bool nesterov;
};

TEST(Optim, SGDMatchesTheReferenceRule) {
  std::mt19937_64 rng(fresh_seed());
  for (const SgdCase& c : {SgdCase{0, 0, 0, false}, SgdCase{0.9, 0, 0, false}, SgdCase{0.9, 0.1, 0.01, false},
                           SgdCase{0.8, 0, 0.05, true}}) {
    for (bool contiguous : {true, false}) {
      const auto grads = gradients(rng);
      const std::vector<double> start = values_of(random_tensor({kSize}, kFloat64, rng));
      const double lr = 0.05;
      const auto got = run<optim::SGD>(start, grads, optim::SGDOptions{.lr = lr, .momentum = c.momentum,
                                                                       .dampening = c.dampening,
                                                                       .weight_decay = c.weight_decay, .nesterov = c.nesterov},
                                       contiguous);
      const auto want = sgd_steps(start, grads, {.lr = lr, .momentum = c.momentum, .dampening = c.dampening,
                                                 .weight_decay = c.weight_decay, .nesterov = c.nesterov});
      for (int t = 0; t < kSteps; ++t) {
        EXPECT_TRUE(all_close(got[t], want[t], 1e-12, 1e-12))
            << "step " << t << " momentum " << c.momentum << (contiguous ? " fused" : " composite");
      }
    }
  }
}

TEST(Optim, AdamAndAdamWMatchTheReferenceRule) {
  std::mt19937_64 rng(fresh_seed());
  for (bool amsgrad : {false, true}) {
    for (double wd : {0.0, 0.1}) {
      for (bool contiguous : {true, false}) {
        const auto grads = gradients(rng);
        const std::vector<double> start = values_of(random_tensor({kSize}, kFloat64, rng));
        AdamRule rule{.lr = 0.01, .beta2 = 0.99, .weight_decay = wd, .amsgrad = amsgrad};
        const auto want_adam = adam_steps(start, grads, rule);
        rule.decoupled = true;
        const auto want_adamw = adam_steps(start, grads, rule);
        const auto adam = run<optim::Adam>(start, grads, optim::AdamOptions{.lr = 0.01, .beta2 = 0.99,
                                                                           .weight_decay = wd, .amsgrad = amsgrad},
                                           contiguous);
        const auto adamw = run<optim::AdamW>(start, grads, optim::AdamWOptions{.lr = 0.01, .beta2 = 0.99,
                                                                              .weight_decay = wd, .amsgrad = amsgrad},
                                              contiguous);
        for (int t = 0; t < kSteps; ++t) {
          EXPECT_TRUE(all_close(adam[t], want_adam[t], 1e-10, 1e-12)) << "Adam step " << t << " " << contiguous;
          EXPECT_TRUE(all_close(adamw[t], want_adamw[t], 1e-10, 1e-12)) << "AdamW step " << t << " " << contiguous;
        }
      }
    }
  }
}

// maximize (torch's) steps along the gradient: torch/optim/sgd.py and adam.py negate the gradient
// before anything else (weight decay, momentum, the moments), so the reference is each rule fed
// -grad; on the fused kernel (contiguous) and on the composite path (strided).
TEST(Optim, MaximizeNegatesTheGradientBeforeAnythingElse) {
  // By hand: p = 2, grad = 1, weight_decay 0.5, lr 0.1: g = -1 + 0.5 * 2 = 0 and p stays 2
  // (negating after the decay would give p = 2.2; without maximize p = 1.8).
  for (bool contiguous : {true, false}) {
    EXPECT_EQ(run<optim::SGD>({2.0}, {{1.0}}, optim::SGDOptions{.lr = 0.1, .weight_decay = 0.5, .maximize = true},
                              contiguous)[0][0],
              2.0);
  }
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (bool contiguous : {true, false}) {
    SCOPED_TRACE(contiguous ? "fused" : "composite");
    const auto grads = gradients(rng);
    const std::vector<double> start = values_of(random_tensor({kSize}, kFloat64, rng));
    for (bool nesterov : {false, true}) {
      const double lr = 0.05, mu = 0.9, dampening = nesterov ? 0.0 : 0.1, wd = 0.01;
      const auto got = run<optim::SGD>(start, grads,
                                       optim::SGDOptions{.lr = lr,
                                                         .momentum = mu,
                                                         .dampening = dampening,
                                                         .weight_decay = wd,
                                                         .nesterov = nesterov,
                                                         .maximize = true},
                                       contiguous);
      const auto want = sgd_steps(start, grads, {.lr = lr, .momentum = mu, .dampening = dampening,
                                                 .weight_decay = wd, .nesterov = nesterov, .maximize = true});
      for (int t = 0; t < kSteps; ++t) {
        EXPECT_TRUE(all_close(got[t], want[t], 1e-12, 1e-12)) << "SGD step " << t << " nesterov " << nesterov;
      }
    }
    for (bool amsgrad : {false, true}) {
      AdamRule rule{.lr = 0.01, .beta2 = 0.99, .weight_decay = 0.1, .amsgrad = amsgrad, .maximize = true};
      const auto want_adam = adam_steps(start, grads, rule);
      rule.decoupled = true;
      const auto want_adamw = adam_steps(start, grads, rule);
      const auto adam = run<optim::Adam>(
          start, grads,
          optim::AdamOptions{.lr = 0.01, .beta2 = 0.99, .weight_decay = 0.1, .amsgrad = amsgrad, .maximize = true},
          contiguous);
      const auto adamw = run<optim::AdamW>(
          start, grads,
          optim::AdamWOptions{.lr = 0.01, .beta2 = 0.99, .weight_decay = 0.1, .amsgrad = amsgrad, .maximize = true},
          contiguous);
      for (int t = 0; t < kSteps; ++t) {
        EXPECT_TRUE(all_close(adam[t], want_adam[t], 1e-10, 1e-12)) << "Adam step " << t << " amsgrad " << amsgrad;
        EXPECT_TRUE(all_close(adamw[t], want_adamw[t], 1e-10, 1e-12)) << "AdamW step " << t << " amsgrad " << amsgrad;
      }
    }
  }
}

// A group as a model gives it: parameters of several sizes (1 element; more than a GPU block's
// share), a strided one (the composite path), one whose gradient arrives a step late (its own
// step count, so its own bias corrections), one that never gets a gradient. Each parameter must
// follow the reference of its own gradients, and each step must be one fused launch for the
// whole group, on a test device where launches are counted.
struct GroupParam {
  std::int64_t size;
  bool strided;
  int first_grad_step;  // kSteps: never
};

const std::vector<GroupParam> kGroup = {{1, false, 0}, {2500, false, 0}, {7, true, 0}, {33, false, 2}, {5, false, kSteps}};

struct GroupRun {
  std::vector<std::vector<double>> final_values;
  std::int64_t fused_launches;
};

template <typename Opt, typename Options>
GroupRun run_group(OpId fused_op, const std::vector<std::vector<double>>& start,
                   const std::vector<std::vector<std::vector<double>>>& grads, Options options) {
  const Device device = other_device();
  std::vector<Tensor> params;
  for (std::size_t k = 0; k < kGroup.size(); ++k) {
    Tensor p = tensor(start[k]).to(device);
    if (kGroup[k].strided) p = non_contiguous_copy(p);
    params.push_back(p.set_requires_grad(true));
  }
  Opt opt(params, options);
  const std::int64_t launches_before = testing::kernel_launches(fused_op);
  for (int t = 0; t < kSteps; ++t) {
    for (std::size_t k = 0; k < kGroup.size(); ++k) {
      if (t >= kGroup[k].first_grad_step) params[k].mutable_grad() = tensor(grads[k][t]).to(device);
    }
    opt.step();
  }
  GroupRun run{{}, testing::kernel_launches(fused_op) - launches_before};
  for (const Tensor& p : params) run.final_values.push_back(values_of(p));
  return run;
}

TEST(Optim, AGroupStepsInOneFusedLaunchAndEachParameterFollowsItsOwnSteps) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> start;
  std::vector<std::vector<std::vector<double>>> grads;  // [param][step][element]
  for (const GroupParam& g : kGroup) {
    start.push_back(values_of(random_tensor({g.size}, kFloat64, rng)));
    grads.emplace_back(kSteps, std::vector<double>(static_cast<std::size_t>(g.size)));
    for (auto& step : grads.back()) {
      for (double& v : step) v = u(rng);
    }
  }
  const double lr = 0.01, wd = 0.1;
  const auto adamw = run_group<optim::AdamW>(OpId::AdamStep, start, grads,
                                             optim::AdamWOptions{.lr = lr, .beta2 = 0.99, .weight_decay = wd});
  const auto sgd = run_group<optim::SGD>(OpId::SgdStep, start, grads,
                                         optim::SGDOptions{.lr = lr, .momentum = 0.9, .weight_decay = wd});
  EXPECT_EQ(adamw.fused_launches, kSteps);
  EXPECT_EQ(sgd.fused_launches, kSteps);
  for (std::size_t k = 0; k < kGroup.size(); ++k) {
    SCOPED_TRACE("parameter " + std::to_string(k));
    const std::vector<std::vector<double>> own_grads(grads[k].begin() + std::min(kGroup[k].first_grad_step, kSteps),
                                                     grads[k].end());
    const auto want_adamw =
        adam_steps(start[k], own_grads, {.lr = lr, .beta2 = 0.99, .weight_decay = wd, .decoupled = true});
    EXPECT_TRUE(all_close(adamw.final_values[k], final_values(start[k], want_adamw), 1e-10, 1e-12));
    const auto want_sgd = sgd_steps(start[k], own_grads, {.lr = lr, .momentum = 0.9, .weight_decay = wd});
    EXPECT_TRUE(all_close(sgd.final_values[k], final_values(start[k], want_sgd), 1e-12, 1e-12));
  }
}

// The group's momentum (what OneCycleLR cycles) is the one the step uses: SGD's momentum and
// Adam's beta1, changed between steps, against the references with the same values; and it is
// saved and restored with the optimiser's state.
TEST(Optim, TheGroupsMomentumIsTheOneTheStepUses) {
  std::mt19937_64 rng(fresh_seed());
  const auto grads = gradients(rng);
  const std::vector<double> start = values_of(random_tensor({kSize}, kFloat64, rng));
  Tensor a = tensor(start).set_requires_grad(true), b = tensor(start).set_requires_grad(true);
  optim::SGD sgd({a}, {.lr = 0.05, .momentum = 0.9});
  optim::Adam adam({b}, {.lr = 0.01});
  std::vector<double> want_sgd = start, buf(kSize), want_adam = start, m(kSize), v(kSize);
  for (int t = 0; t < kSteps; ++t) {
    const double momentum = 0.5 + 0.05 * t;  // a different value at every step
    sgd.param_groups()[0].momentum = momentum;
    adam.param_groups()[0].momentum = momentum;
    a.mutable_grad() = tensor(grads[t]);
    b.mutable_grad() = tensor(grads[t]);
    sgd.step();
    adam.step();
    for (std::int64_t i = 0; i < kSize; ++i) {
      const double g = grads[t][i];
      buf[i] = t == 0 ? g : momentum * buf[i] + g;
      want_sgd[i] -= 0.05 * buf[i];
      m[i] = momentum * m[i] + (1 - momentum) * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      const double mhat = m[i] / (1 - std::pow(momentum, t + 1)), vhat = v[i] / (1 - std::pow(0.999, t + 1));
      want_adam[i] -= 0.01 * mhat / (std::sqrt(vhat) + 1e-8);
    }
    EXPECT_TRUE(all_close(values_of(a), want_sgd, 1e-12, 1e-12)) << "SGD step " << t;
    EXPECT_TRUE(all_close(values_of(b), want_adam, 1e-10, 1e-12)) << "Adam step " << t;
  }
  Tensor c = tensor(start).set_requires_grad(true);
  optim::SGD resumed({c}, {.lr = 0.05, .momentum = 0.1});
  resumed.load_state_dict(sgd.state_dict());
  EXPECT_EQ(*resumed.param_groups()[0].momentum, *sgd.param_groups()[0].momentum);
}

// Groups added with add_param_group step with their own lr (the optimiser's when none is given)
// and the optimiser's other options, each parameter against the float64 reference; the added
// group carries the momentum (beta1) that OneCycleLR cycles and state_dict saves. A parameter
// already in a group is refused and nothing is added (pushed onto param_groups() by hand it was
// stepped twice, and a group without momentum made OneCycleLR refuse the optimiser).
TEST(Optim, AddedParamGroupsStepWithTheirOwnLr) {
  std::mt19937_64 rng(fresh_seed());
  const auto grads_p = gradients(rng), grads_q = gradients(rng), grads_r = gradients(rng);
  const std::vector<double> start_p = values_of(random_tensor({kSize}, kFloat64, rng));
  const std::vector<double> start_q = values_of(random_tensor({kSize}, kFloat64, rng));
  const std::vector<double> start_r = values_of(random_tensor({kSize}, kFloat64, rng));
  for (bool adam : {false, true}) {
    SCOPED_TRACE(adam ? "AdamW" : "SGD");
    Tensor p = tensor(start_p).set_requires_grad(true);
    Tensor q = non_contiguous_copy(tensor(start_q)).set_requires_grad(true);  // the composite path
    Tensor r = tensor(start_r).set_requires_grad(true);
    const double lr = 0.05, wd = 0.1;
    std::unique_ptr<optim::Optimizer> opt;
    if (adam) {
      opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::AdamWOptions{.lr = lr, .weight_decay = wd});
    } else {
      opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p},
                                         optim::SGDOptions{.lr = lr, .momentum = 0.9, .weight_decay = wd});
    }
    opt->add_param_group({q}, 0.2);
    opt->add_param_group({r});
    ASSERT_EQ(opt->param_groups().size(), 3U);
    EXPECT_EQ(opt->param_groups()[2].lr, lr);
    EXPECT_EQ(opt->param_groups()[1].momentum, opt->param_groups()[0].momentum);
    const Tensor fresh = tensor(start_p).set_requires_grad(true);
    EXPECT_TRUE(throws_with<Error>([&] { opt->add_param_group({fresh, p}, 0.1); }, "parameters 0 and 4 are the same"));
    EXPECT_TRUE(throws_with<Error>([&] { opt->add_param_group({q}); }, "parameters 1 and 3 are the same tensor"));
    EXPECT_EQ(opt->param_groups().size(), 3U) << "a refused group is not added";
    for (int t = 0; t < kSteps; ++t) {
      p.mutable_grad() = tensor(grads_p[t]);
      q.mutable_grad() = tensor(grads_q[t]);
      r.mutable_grad() = tensor(grads_r[t]);
      opt->step();
    }
    const std::vector<std::tuple<Tensor, std::vector<double>, const std::vector<std::vector<double>>*, double>> cases =
        {{p, start_p, &grads_p, lr}, {q, start_q, &grads_q, 0.2}, {r, start_r, &grads_r, lr}};
    for (const auto& [param, start, grads, group_lr] : cases) {
      const auto want =
          adam ? adam_steps(start, *grads, {.lr = group_lr, .weight_decay = wd, .decoupled = true})
               : sgd_steps(start, *grads, {.lr = group_lr, .momentum = 0.9, .weight_decay = wd});
      EXPECT_TRUE(all_close(values_of(param), want.back(), 1e-10, 1e-12)) << "group lr " << group_lr;
    }
    // OneCycleLR cycles every group's momentum; state_dict saves it.
    optim::OneCycleLR sched(*opt, 1.0, 10);
    sched.step();
    EXPECT_EQ(opt->param_groups()[1].momentum, opt->param_groups()[0].momentum);
    EXPECT_EQ(opt->state_dict().count("param_groups.2.momentum"), 1U);
  }
}

TEST(Optim, ZeroGradSetsToNoneOrZeroes) {
  Tensor p = randn({3}).set_requires_grad(true);
  optim::SGD opt({p}, {.lr = 0.1});
  (p * 2).sum().backward();
  opt.zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(values_of(p.grad()), std::vector<double>(3, 0.0));
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  const std::vector<double> before = values_of(p);
  opt.step();  // no gradient: nothing moves, nothing throws
  EXPECT_EQ(values_of(p), before);
}

TEST(Optim, StateDictResumesIdentically) {
  std::mt19937_64 rng(fresh_seed());
  const auto grads = gradients(rng);
  const Tensor start = random_tensor({kSize}, kFloat64, rng);
  Tensor a = start.clone().set_requires_grad(true);
  optim::Adam first({a}, {.lr = 0.01});
  for (int t = 0; t < 3; ++t) {
    a.mutable_grad() = tensor(grads[t]);
    first.step();
  }
  Tensor b = a.detach().clone().set_requires_grad(true);
  optim::Adam resumed({b}, {.lr = 0.5});  // lr restored from the state
  resumed.load_state_dict(first.state_dict());
  EXPECT_EQ(resumed.param_groups()[0].lr, 0.01);
  for (int t = 3; t < kSteps; ++t) {
    a.mutable_grad() = tensor(grads[t]);
    b.mutable_grad() = tensor(grads[t]);
    first.step();
    resumed.step();
  }
  EXPECT_EQ(values_of(a), values_of(b));
}

// A step refused for a gradient that does not match its parameter changes nothing: no
// parameter, no momentum buffer, no step count (else the next step would read a buffer never
// written, or use a bias correction one step ahead).
TEST(Optim, AMismatchedGradientIsRefusedBeforeAnyStateChanges) {
  Tensor p = randn({3}, {.dtype = kFloat64}).set_requires_grad(true);
  Tensor q = randn({2}, {.dtype = kFloat64}).set_requires_grad(true);
  const std::vector<double> p_before = values_of(p);
  p.mutable_grad() = ones_like(p);
  optim::SGD sgd({p, q}, {.lr = 0.1, .momentum = 0.9});
  optim::Adam adam({p, q}, {.lr = 0.1});
  for (const auto& [bad, what] : std::vector<std::pair<Tensor, std::string>>{
           {ones({3}, {.dtype = kFloat64}), "float64 [3] on cpu but the parameter is float64 [2] on cpu"},
           {ones({2}, {.dtype = kFloat32}), "float32 [2] on cpu but the parameter is float64 [2]"},
           {ones({2}, {.dtype = kFloat64, .device = other_device()}), "on " + other_device().str() + " but the parameter is on cpu"}}) {
    q.mutable_grad() = bad;
    EXPECT_TRUE(throws_with<Error>([&] { sgd.step(); }, "SGD.step(): the gradient of parameter 1 is " + what));
    EXPECT_TRUE(throws_with<Error>([&] { adam.step(); }, "Adam.step(): the gradient of parameter 1"));
  }
  EXPECT_EQ(values_of(p), p_before);
  EXPECT_TRUE(sgd.state_dict().count("state.0.momentum_buffer") == 0) << "no buffer was made";
  EXPECT_TRUE(adam.state_dict().count("state.0.step") == 0) << "no step was counted";
}

// amsgrad on, resumed from a state saved without it: PyTorch fails on the missing
// max_exp_avg_sq; so does hwaro, with a message, instead of stepping as plain Adam.
TEST(Optim, AmsgradResumedFromAStateWithoutItIsRefused) {
  Tensor a = randn({4}, {.dtype = kFloat64}).set_requires_grad(true);
  optim::Adam plain({a}, {.lr = 0.01});
  a.mutable_grad() = ones_like(a);
  plain.step();
  Tensor b = a.detach().clone().set_requires_grad(true);
  optim::Adam with_amsgrad({b}, {.lr = 0.01, .amsgrad = true});
  with_amsgrad.load_state_dict(plain.state_dict());
  b.mutable_grad() = ones_like(b);
  const std::vector<double> before = values_of(b);
  EXPECT_TRUE(throws_with<Error>([&] { with_amsgrad.step(); },
                                 "Adam: amsgrad is on but the state of parameter 0 has no max_exp_avg_sq"));
  EXPECT_EQ(values_of(b), before);
}

// amsgrad's running maximum propagates a NaN as torch.maximum does, in the fused kernel (a
// contiguous parameter) as in the composite step (a strided one).
TEST(Optim, AmsgradsMaximumKeepsANanOnBothPaths) {
  Tensor p = randn({4}, {.dtype = kFloat64}).set_requires_grad(true);
  Tensor q = non_contiguous_copy(randn({4}, {.dtype = kFloat64})).set_requires_grad(true);
  optim::Adam adam({p, q}, {.lr = 0.01, .amsgrad = true});
  p.mutable_grad() = ones_like(p);
  q.mutable_grad() = ones_like(q);
  adam.step();
  auto state = adam.state_dict();
  for (const char* key : {"state.0.max_exp_avg_sq", "state.1.max_exp_avg_sq"}) {
    Tensor poisoned = state.at(key).clone();
    poisoned[0].fill_(std::numeric_limits<double>::quiet_NaN());
    state[key] = poisoned;
  }
  adam.load_state_dict(state);
  adam.step();
  for (const Tensor& t : {p, q}) {
    const std::vector<double> v = values_of(t);
    EXPECT_TRUE(std::isnan(v[0])) << "the NaN in max_exp_avg_sq reaches the parameter";
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_TRUE(std::isfinite(v[i]));
  }
}

// Without weight decay no decay term is added, as torch's `if weight_decay != 0`: 0 * inf would
// turn an infinite parameter into NaN. Both paths: the fused kernel (p) and the composite one (q).
TEST(Optim, WithoutWeightDecayAnInfiniteParameterStaysInfinite) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto check = [&](const char* label, optim::Optimizer& opt, Tensor& p, Tensor& q) {
    for (int step = 0; step < 2; ++step) {
      p.mutable_grad() = ones_like(p);
      q.mutable_grad() = ones_like(q);
      opt.step();
    }
    for (const Tensor& t : {p, q}) {
      const std::vector<double> v = values_of(t);
      EXPECT_EQ(v[0], inf) << label;
      EXPECT_TRUE(std::isfinite(v[1])) << label;
    }
  };
  const auto params = [&] {
    Tensor p = tensor(std::vector<double>{inf, 1.0}).set_requires_grad(true);
    Tensor q = non_contiguous_copy(tensor(std::vector<double>{inf, 1.0})).set_requires_grad(true);
    return std::make_pair(p, q);
  };
  {
    auto [p, q] = params();
    optim::SGD sgd({p, q}, {.lr = 0.1, .momentum = 0.9});
    check("SGD", sgd, p, q);
  }
  {
    auto [p, q] = params();
    optim::Adam adam({p, q}, {.lr = 0.01});
    check("Adam", adam, p, q);
  }
  {
    auto [p, q] = params();
    optim::AdamW adamw({p, q}, {.lr = 0.01, .weight_decay = 0.0});
    check("AdamW", adamw, p, q);
  }
}

TEST(Optim, BadOptionsNameTheOption) {
  Tensor p = randn({2}).set_requires_grad(true);
  EXPECT_TRUE(throws_with<Error>([&] { optim::SGD({p}, {.lr = -1}); }, "learning rate"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::Adam({p}, {.beta1 = 1.0}); }, "beta1"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SGD({p}, {.lr = 0.1, .nesterov = true}); }, "nesterov"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::SGD({}, {}); }, "empty parameter list"));
}

TEST(Optim, AParameterListedTwiceIsRefusedAndATiedOneIsListedOnce) {
  Tensor p = randn({3}).set_requires_grad(true);
  Tensor q = randn({3}).set_requires_grad(true);
  EXPECT_TRUE(throws_with<Error>([&] { optim::SGD({p, q, p}, {.lr = 0.1}); },
                                 "SGD: parameters 0 and 2 are the same tensor"));
  EXPECT_TRUE(throws_with<Error>([&] { optim::Adam({q, q}, {}); }, "Adam: parameters 0 and 1 are the same tensor"));
  // A layer used twice (its tensors held by two paths): parameters() and named_parameters() list
  // them once each, under the first path, as PyTorch's (remove_duplicate=True) do.
  nn::Linear shared(3, 3);
  nn::Sequential tied(shared, nn::ReLU(), shared);
  std::vector<std::string> names;
  for (const auto& [name, t] : tied->named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(tied->parameters().size(), 2U);
  EXPECT_NO_THROW(optim::SGD(tied->parameters(), {.lr = 0.1}));
}

}  // namespace
}  // namespace hwaro::test
