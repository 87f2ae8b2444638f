// The fused optimiser steps on a GPU (cuda/optimizer_kernels.cu through multi_tensor_apply.cuh)
// where test_parity's small groups do not reach: a group of more parameters than one launch takes
// (kTuplesPerLaunch = 256), so that the later launches' slots and first blocks are used too;
// empty parameters among them (they take no slot); one parameter of many blocks; float64 as well
// as float32. Each parameter is compared with a float64 loop of torch.optim's rule over its own
// values. Without a GPU the cases skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

const hw::Device kGpu("cuda:0");
constexpr int kSteps = 3;

#define SKIP_WITHOUT_GPU() \
  if (!hw::cuda::is_available()) GTEST_SKIP() << "no GPU: " << hw::cuda::unavailable_reason()

// Starting values and each step's gradients of every parameter, drawn in `dtype` so that the
// float64 reference starts from exactly what the GPU holds.
struct Group {
  std::vector<std::vector<double>> start;                // [param][element]
  std::vector<std::vector<std::vector<double>>> grads;   // [param][step][element]
};

Group random_group(hw::DType dtype, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> size_of(1, 3000);
  Group g;
  for (int k = 0; k < 300; ++k) {
    const std::int64_t n = k % 37 == 0 ? 0 : k == 260 ? 70001 : size_of(rng);  // 0: the first is empty; 260: in the second launch
    g.start.push_back(hw::test::values_of(hw::test::random_tensor({n}, dtype, rng)));
    g.grads.emplace_back();
    for (int t = 0; t < kSteps; ++t) {
      g.grads.back().push_back(hw::test::values_of(hw::test::random_tensor({n}, dtype, rng, -1, 1)));
    }
  }
  return g;
}

hw::Tensor on_gpu(const std::vector<double>& values, hw::DType dtype) {
  return hw::tensor(values, {static_cast<std::int64_t>(values.size())}).to(dtype).to(kGpu);
}

// The parameters after kSteps steps of Opt over the whole group, on the GPU.
template <typename Opt, typename Options>
std::vector<std::vector<double>> run_on_gpu(const Group& g, hw::DType dtype, const Options& options) {
  std::vector<hw::Tensor> params;
  for (const auto& s : g.start) params.push_back(on_gpu(s, dtype).set_requires_grad(true));
  Opt opt(params, options);
  for (int t = 0; t < kSteps; ++t) {
    for (std::size_t k = 0; k < params.size(); ++k) params[k].mutable_grad() = on_gpu(g.grads[k][t], dtype);
    opt.step();
  }
  std::vector<std::vector<double>> out;
  for (const hw::Tensor& p : params) out.push_back(hw::test::values_of(p.detach().cpu()));
  return out;
}

// torch.optim.Adam (decoupled: AdamW) with amsgrad and maximize, in float64.
std::vector<double> adam_reference(std::vector<double> p, const std::vector<std::vector<double>>& grads, double lr,
                                   double wd, bool decoupled) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> m(p.size()), v(p.size()), vmax(p.size());
  for (int t = 1; t <= kSteps; ++t) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double g = -grads[t - 1][i];
      if (decoupled) {
        p[i] *= 1 - lr * wd;
      } else {
        g += wd * p[i];
      }
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      vmax[i] = std::max(vmax[i], v[i]);
      p[i] -= lr / (1 - std::pow(b1, t)) * m[i] / (std::sqrt(vmax[i] / (1 - std::pow(b2, t))) + eps);
    }
  }
  return p;
}

// torch.optim.SGD with momentum, dampening or nesterov, and weight decay, in float64.
std::vector<double> sgd_reference(std::vector<double> p, const std::vector<std::vector<double>>& grads, double lr,
                                  double mu, double dampening, double wd, bool nesterov) {
  std::vector<double> buf(p.size());
  for (int t = 0; t < kSteps; ++t) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double g = grads[t][i] + wd * p[i];
      buf[i] = t == 0 ? g : mu * buf[i] + (1 - dampening) * g;
      g = nesterov ? g + mu * buf[i] : buf[i];
      p[i] -= lr * g;
    }
  }
  return p;
}

TEST(CudaOptimizer, AGroupOfMoreParametersThanOneLaunchTakesInBothFloatDtypes) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (const hw::DType dtype : {hw::kFloat32, hw::kFloat64}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    const double tol = dtype == hw::kFloat64 ? 1e-12 : 2e-5;
    const Group g = random_group(dtype, rng);
    const double lr = 0.01, wd = 0.1;
    const auto adam = run_on_gpu<hw::optim::Adam>(
        g, dtype, hw::optim::AdamOptions{.lr = lr, .weight_decay = wd, .amsgrad = true, .maximize = true});
    const auto adamw = run_on_gpu<hw::optim::AdamW>(
        g, dtype, hw::optim::AdamWOptions{.lr = lr, .weight_decay = wd, .amsgrad = true, .maximize = true});
    const auto sgd = run_on_gpu<hw::optim::SGD>(
        g, dtype, hw::optim::SGDOptions{.lr = lr, .momentum = 0.9, .dampening = 0.1, .weight_decay = wd});
    const auto nesterov = run_on_gpu<hw::optim::SGD>(
        g, dtype, hw::optim::SGDOptions{.lr = lr, .momentum = 0.9, .weight_decay = wd, .nesterov = true});
    for (std::size_t k = 0; k < g.start.size(); ++k) {
      SCOPED_TRACE(::testing::Message() << "parameter " << k << " of " << g.start[k].size() << " elements");
      ASSERT_TRUE(hw::test::all_close(adam[k], adam_reference(g.start[k], g.grads[k], lr, wd, false), tol, tol));
      ASSERT_TRUE(hw::test::all_close(adamw[k], adam_reference(g.start[k], g.grads[k], lr, wd, true), tol, tol));
      ASSERT_TRUE(hw::test::all_close(sgd[k], sgd_reference(g.start[k], g.grads[k], lr, 0.9, 0.1, wd, false), tol, tol));
      ASSERT_TRUE(
          hw::test::all_close(nesterov[k], sgd_reference(g.start[k], g.grads[k], lr, 0.9, 0.0, wd, true), tol, tol));
    }
  }
}

}  // namespace
