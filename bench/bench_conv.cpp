// conv2d forward and forward+backward at the shapes of `hwaro train --model cnn` on
// Fashion-MNIST, and that CNN's whole training step (conv 1->32, pool, conv 32->64, pool,
// linear; SGD) in samples per second. The convolutions run where the build sends them: oneDNN
// on the CPU for float32, cuDNN on CUDA (HWARO_CUDNN=off: im2col + cuBLAS), else im2col + GEMM.
// The same step in LibTorch: bench/libtorch/ and scripts/bench-cnn-vs-libtorch.sh.
// The CUDA rows run only when a GPU is present (skipped with the reason otherwise).
#include <benchmark/benchmark.h>

#include "device_rows.h"
#include "hwaro/hwaro.h"

namespace hw = hwaro;
namespace F = hw::nn::functional;

namespace {

using hw::bench::skip_without;
using hw::bench::sync;

constexpr std::int64_t kBatch = 64;

// The two convolutions of the CNN: (in, out, side) with 3x3 kernels and padding 1.
struct Layer {
  std::int64_t in, out, side;
};
constexpr Layer kLayers[] = {{1, 32, 28}, {32, 64, 14}};

void set_flops(benchmark::State& state, const Layer& l, double passes) {
  const double flops = 2.0 * kBatch * l.out * l.side * l.side * l.in * 9 * passes;
  state.counters["GFLOP"] = benchmark::Counter(flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void conv(benchmark::State& state, hw::Device device, bool backward) {
  if (skip_without(state, device)) return;
  const Layer& l = kLayers[state.range(0)];
  hw::Tensor x = hw::randn({kBatch, l.in, l.side, l.side}).to(device);
  hw::Tensor w = (hw::randn({l.out, l.in, 3, 3}) * 0.1).to(device);
  hw::Tensor b = hw::zeros({l.out}).to(device);
  if (backward) {
    x.set_requires_grad(true);
    w.set_requires_grad(true);
    b.set_requires_grad(true);
  }
  for (auto _ : state) {
    hw::Tensor y = F::conv2d(x, w, b, {1}, {1});
    if (backward) y.sum().backward();
    sync(device);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_flops(state, l, backward ? 3.0 : 1.0);
}

void cnn_train_step(benchmark::State& state, hw::Device device) {
  if (skip_without(state, device)) return;
  auto model = hw::nn::Sequential(hw::nn::Conv2d(hw::nn::Conv2dOptions(1, 32, 3).padding(1)), hw::nn::ReLU(),
                                  hw::nn::MaxPool2d(2), hw::nn::Conv2d(hw::nn::Conv2dOptions(32, 64, 3).padding(1)),
                                  hw::nn::ReLU(), hw::nn::MaxPool2d(2), hw::nn::Flatten(), hw::nn::Linear(64 * 7 * 7, 10));
  model->to(device);
  hw::optim::SGD opt(model->parameters(), {.lr = 0.01, .momentum = 0.9});
  const hw::Tensor x = hw::randn({kBatch, 1, 28, 28}).to(device);
  const hw::Tensor y = hw::randint(0, 10, {kBatch}).to(device);
  for (auto _ : state) {
    opt.zero_grad();
    hw::Tensor loss = F::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    sync(device);
  }
  state.counters["samples"] = benchmark::Counter(static_cast<double>(kBatch * state.iterations()), benchmark::Counter::kIsRate);
}

void BM_conv2d_forward_cpu(benchmark::State& state) { conv(state, hw::Device("cpu"), false); }
void BM_conv2d_forward_backward_cpu(benchmark::State& state) { conv(state, hw::Device("cpu"), true); }
void BM_cnn_train_step_cpu(benchmark::State& state) { cnn_train_step(state, hw::Device("cpu")); }
void BM_conv2d_forward_cuda(benchmark::State& state) { conv(state, hw::Device("cuda"), false); }
void BM_conv2d_forward_backward_cuda(benchmark::State& state) { conv(state, hw::Device("cuda"), true); }
void BM_cnn_train_step_cuda(benchmark::State& state) { cnn_train_step(state, hw::Device("cuda")); }

}  // namespace

// Argument: the layer (0: conv 1->32 at 28x28, 1: conv 32->64 at 14x14), batch 64.
BENCHMARK(BM_conv2d_forward_cpu)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_conv2d_forward_backward_cpu)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cnn_train_step_cpu)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_conv2d_forward_cuda)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_conv2d_forward_backward_cuda)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cnn_train_step_cuda)->Unit(benchmark::kMillisecond)->UseRealTime();
