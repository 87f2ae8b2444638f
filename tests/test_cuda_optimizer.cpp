// The fused optimiser steps on a GPU (cuda/optimizer_kernels.cu through multi_tensor_apply.cuh)
// where test_parity's small groups do not reach: a group of more parameters than one launch takes
// (kTuplesPerLaunch = 256), so that the later launches' slots and first blocks are used too;
// empty parameters among them (they take no slot); one parameter of many blocks; float64 as well
// as float32. Each parameter is compared with a float64 loop of torch.optim's rule over its own
// values. Without a GPU the cases skip.
#include <gtest/gtest.h>

#include <vector>

#include "support/optim_reference.h"
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
      const auto& start = g.start[k];
      const auto& grads = g.grads[k];
      hw::test::AdamRule adam_rule{.lr = lr, .weight_decay = wd, .amsgrad = true, .maximize = true};
      ASSERT_TRUE(hw::test::all_close(adam[k], hw::test::adam_steps(start, grads, adam_rule).back(), tol, tol));
      adam_rule.decoupled = true;
      ASSERT_TRUE(hw::test::all_close(adamw[k], hw::test::adam_steps(start, grads, adam_rule).back(), tol, tol));
      const hw::test::SgdRule sgd_rule{.lr = lr, .momentum = 0.9, .dampening = 0.1, .weight_decay = wd};
      ASSERT_TRUE(hw::test::all_close(sgd[k], hw::test::sgd_steps(start, grads, sgd_rule).back(), tol, tol));
      const hw::test::SgdRule nesterov_rule{.lr = lr, .momentum = 0.9, .weight_decay = wd, .nesterov = true};
      ASSERT_TRUE(hw::test::all_close(nesterov[k], hw::test::sgd_steps(start, grads, nesterov_rule).back(), tol, tol));
    }
  }
}

}  // namespace
