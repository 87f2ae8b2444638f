// The fused optimiser step (OpId::AdamStep: one kernel per parameter reads the gradient and both
// moments once and writes the parameter and moments once) against the same Adam update written
// op by op with public tensor ops, as a user without the fused kernel would (about ten passes
// over memory, and a temporary per op). Parameters of the MLP of `hwaro train` (784-256-128-10,
// 235k floats) and of one 16M-float tensor, where memory bandwidth decides. Report the ratio of
// the two rows of a size, measured in the same run.
// The CUDA rows run only when a GPU is present (skipped with the reason otherwise).
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "device_rows.h"
#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

using hw::bench::skip_without;
using hw::bench::sync;

constexpr double kLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

// Parameter shapes: range(0) == 0 the MLP's six tensors, 1 one large tensor.
std::vector<std::vector<std::int64_t>> shapes_for(std::int64_t which) {
  if (which == 0) return {{256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}};
  return {{4096, 4096}};
}

// Parameters with a fixed random gradient each.
std::vector<hw::Tensor> make_params(std::int64_t which, hw::Device device) {
  std::vector<hw::Tensor> params;
  for (const auto& shape : shapes_for(which)) {
    hw::Tensor p = hw::randn(shape).to(device).requires_grad_(true);
    p.mutable_grad() = hw::randn(shape).to(device);
    params.push_back(p);
  }
  return params;
}

void set_counters(benchmark::State& state, const std::vector<hw::Tensor>& params) {
  std::int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  // The fused kernel's traffic: read param, grad, m, v; write param, m, v (float32).
  state.counters["GB/s_fused_traffic"] =
      benchmark::Counter(7.0 * 4.0 * static_cast<double>(n) * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void fused_adam(benchmark::State& state, hw::Device device) {
  if (skip_without(state, device)) return;
  std::vector<hw::Tensor> params = make_params(state.range(0), device);
  hw::optim::Adam adam(params, {.lr = kLr, .beta1 = kBeta1, .beta2 = kBeta2, .eps = kEps});
  adam.step();  // creates the moments
  sync(device);
  for (auto _ : state) {
    adam.step();
    sync(device);
  }
  set_counters(state, params);
}

void composite_adam(benchmark::State& state, hw::Device device) {
  if (skip_without(state, device)) return;
  std::vector<hw::Tensor> params = make_params(state.range(0), device);
  std::vector<hw::Tensor> m, v;
  for (const auto& p : params) {
    m.push_back(hw::zeros_like(p));
    v.push_back(hw::zeros_like(p));
  }
  hw::NoGradGuard no_grad;
  std::int64_t t = 0;
  sync(device);
  for (auto _ : state) {
    ++t;
    const double bias1 = 1.0 - std::pow(kBeta1, static_cast<double>(t));
    const double bias2 = 1.0 - std::pow(kBeta2, static_cast<double>(t));
    for (std::size_t i = 0; i < params.size(); ++i) {
      const hw::Tensor& g = params[i].grad();
      m[i].mul_(kBeta1).add_(g, 1.0 - kBeta1);
      v[i].mul_(kBeta2).add_(g * g, 1.0 - kBeta2);
      const hw::Tensor denom = (v[i] / bias2).sqrt().add(kEps);
      params[i].sub_(m[i] / denom, kLr / bias1);
    }
    sync(device);
  }
  set_counters(state, params);
}

void BM_adam_fused_cpu(benchmark::State& state) { fused_adam(state, hw::Device("cpu")); }
void BM_adam_composite_cpu(benchmark::State& state) { composite_adam(state, hw::Device("cpu")); }
void BM_adam_fused_cuda(benchmark::State& state) { fused_adam(state, hw::Device("cuda")); }
void BM_adam_composite_cuda(benchmark::State& state) { composite_adam(state, hw::Device("cuda")); }

}  // namespace

BENCHMARK(BM_adam_fused_cpu)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_adam_composite_cpu)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_adam_fused_cuda)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_adam_composite_cuda)->Arg(0)->Arg(1)->UseRealTime();
