// The fused optimiser step (OpId::AdamStep: one multi-tensor launch per parameter group reads each
// gradient and both moments once and writes the parameter and moments once) against
//   - the same Adam update written op by op with public tensor ops, as a user without the fused
//     kernel would (about ten passes over memory, and a temporary per op), and
//   - the fused kernel launched once per parameter (an optimiser per parameter: how hwaro stepped
//     before the multi-tensor launch), which on a GPU pays a launch per parameter.
// Parameters of the MLP of `hwaro train` (784-256-128-10, 235k floats), of one 16M-float tensor,
// where memory bandwidth decides, and of a ResNet-18-shaped model (62 tensors, 11.7M floats),
// where launches add up. Report the ratio of the rows of a size, measured in the same run.
// The CUDA rows run only when a GPU is present (skipped with the reason otherwise).
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <vector>

#include "device_rows.h"
#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace {

using hw::bench::skip_without;
using hw::bench::sync;

constexpr double kLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

// ResNet-18's parameter shapes: a stem, four stages of two basic blocks (two 3x3 convolutions with
// batch norm each, a 1x1 downsampling convolution where the width doubles), the classifier.
std::vector<std::vector<std::int64_t>> resnet18_shapes() {
  std::vector<std::vector<std::int64_t>> shapes = {{64, 3, 7, 7}, {64}, {64}};
  std::int64_t in = 64;
  for (std::int64_t width : {64, 128, 256, 512}) {
    for (int block = 0; block < 2; ++block) {
      const std::int64_t block_in = block == 0 ? in : width;
      for (std::int64_t c_in : {block_in, width}) {
        shapes.push_back({width, c_in, 3, 3});
        shapes.push_back({width});
        shapes.push_back({width});
      }
      if (block_in != width) shapes.insert(shapes.end(), {{width, block_in, 1, 1}, {width}, {width}});
    }
    in = width;
  }
  shapes.insert(shapes.end(), {{1000, 512}, {1000}});
  return shapes;
}

// Parameter shapes: range(0) == 0 the MLP's six tensors, 1 one large tensor, 2 ResNet-18's.
std::vector<std::vector<std::int64_t>> shapes_for(std::int64_t which) {
  if (which == 0) return {{256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}};
  if (which == 1) return {{4096, 4096}};
  return resnet18_shapes();
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

void fused_adam_per_parameter(benchmark::State& state, hw::Device device) {
  if (skip_without(state, device)) return;
  std::vector<hw::Tensor> params = make_params(state.range(0), device);
  std::vector<std::unique_ptr<hw::optim::Adam>> optimizers;
  for (const hw::Tensor& p : params) {
    optimizers.push_back(std::make_unique<hw::optim::Adam>(
        std::vector<hw::Tensor>{p}, hw::optim::AdamOptions{.lr = kLr, .beta1 = kBeta1, .beta2 = kBeta2, .eps = kEps}));
    optimizers.back()->step();  // creates the moments
  }
  sync(device);
  for (auto _ : state) {
    for (auto& adam : optimizers) adam->step();
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
void BM_adam_fused_per_parameter_cpu(benchmark::State& state) { fused_adam_per_parameter(state, hw::Device("cpu")); }
void BM_adam_composite_cpu(benchmark::State& state) { composite_adam(state, hw::Device("cpu")); }
void BM_adam_fused_cuda(benchmark::State& state) { fused_adam(state, hw::Device("cuda")); }
void BM_adam_fused_per_parameter_cuda(benchmark::State& state) { fused_adam_per_parameter(state, hw::Device("cuda")); }
void BM_adam_composite_cuda(benchmark::State& state) { composite_adam(state, hw::Device("cuda")); }

}  // namespace

BENCHMARK(BM_adam_fused_cpu)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK(BM_adam_fused_per_parameter_cpu)->Arg(0)->Arg(2)->UseRealTime();
BENCHMARK(BM_adam_composite_cpu)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK(BM_adam_fused_cuda)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK(BM_adam_fused_per_parameter_cuda)->Arg(0)->Arg(2)->UseRealTime();
BENCHMARK(BM_adam_composite_cuda)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();
