// The CUDA kernels against the hardware's own baselines:
//   matmul TFLOP/s in float32, TF32 and bfloat16, hwaro (hw::mm) against cuBLAS called directly
//   on the same buffers (the cost of hwaro's dispatch and layout logic);
//   elementwise add GB/s against a device-to-device cudaMemcpyAsync (the bandwidth ceiling);
//   the launch overhead of a one-element add (host time per op, allocation included).
// GPU time comes from CUDA events on the current stream. Without a GPU every case reports
// "no GPU". Run: build/bench/bench_cuda_kernels.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <hwaro/hwaro.h>

#include <functional>
#include <string>

namespace hw = hwaro;

namespace {

const hw::Device kGpu("cuda:0");

bool skip_without_gpu(benchmark::State& state) {
  if (hw::cuda::is_available()) return false;
  state.SkipWithError(("no GPU: " + hw::cuda::unavailable_reason()).c_str());
  return true;
}

cudaStream_t current_stream() { return static_cast<cudaStream_t>(hw::cuda::current_stream().native_handle()); }

// Times `work` with events around it on the current stream, one iteration per call.
void time_on_gpu(benchmark::State& state, const std::function<void()>& work) {
  work();  // warm-up: cuBLAS handles, allocator blocks, kernel loading
  hw::cuda::synchronize();
  hw::cuda::Event start(true), stop(true);
  for (auto _ : state) {
    start.record();
    work();
    stop.record();
    stop.synchronize();
    state.SetIterationTime(static_cast<double>(start.elapsed_time(stop)) / 1e3);
  }
}

void set_flops(benchmark::State& state, std::int64_t n) {
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n) * 1e-12,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

struct MatmulCase {
  hw::DType dtype;
  bool tf32;
};

void matmul_hwaro(benchmark::State& state, MatmulCase c) {
  if (skip_without_gpu(state)) return;
  const std::int64_t n = state.range(0);
  const hw::Tensor a = hw::randn({n, n}, {.dtype = c.dtype, .device = kGpu});
  const hw::Tensor b = hw::randn({n, n}, {.dtype = c.dtype, .device = kGpu});
  hw::cuda::matmul::set_allow_tf32(c.tf32);
  time_on_gpu(state, [&] { benchmark::DoNotOptimize(hw::mm(a, b)); });
  hw::cuda::matmul::set_allow_tf32(false);
  set_flops(state, n);
}

void matmul_cublas(benchmark::State& state, MatmulCase c) {
  if (skip_without_gpu(state)) return;
  const std::int64_t n = state.range(0);
  const hw::Tensor a = hw::randn({n, n}, {.dtype = c.dtype, .device = kGpu});
  const hw::Tensor b = hw::randn({n, n}, {.dtype = c.dtype, .device = kGpu});
  const hw::Tensor out = hw::empty({n, n}, {.dtype = c.dtype, .device = kGpu});
  const cudaDataType_t type = c.dtype == hw::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute = c.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cublasCreate failed");
    return;
  }
  cublasSetStream(handle, current_stream());
  const float alpha = 1.0f, beta = 0.0f;
  const int ni = static_cast<int>(n);
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  time_on_gpu(state, [&] {
    status = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, b.data_ptr(), type, ni, a.data_ptr(),
                          type, ni, &beta, out.data_ptr(), type, ni, compute, CUBLAS_GEMM_DEFAULT);
  });
  cublasDestroy(handle);
  if (status != CUBLAS_STATUS_SUCCESS) state.SkipWithError("cublasGemmEx failed");
  set_flops(state, n);
}

void BM_Matmul_FP32_Hwaro(benchmark::State& s) { matmul_hwaro(s, {hw::kFloat32, false}); }
void BM_Matmul_FP32_cuBLAS(benchmark::State& s) { matmul_cublas(s, {hw::kFloat32, false}); }
void BM_Matmul_TF32_Hwaro(benchmark::State& s) { matmul_hwaro(s, {hw::kFloat32, true}); }
void BM_Matmul_TF32_cuBLAS(benchmark::State& s) { matmul_cublas(s, {hw::kFloat32, true}); }
void BM_Matmul_BF16_Hwaro(benchmark::State& s) { matmul_hwaro(s, {hw::kBFloat16, false}); }
void BM_Matmul_BF16_cuBLAS(benchmark::State& s) { matmul_cublas(s, {hw::kBFloat16, false}); }
#define HWARO_MATMUL_BENCH(fn) BENCHMARK(fn)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond)
HWARO_MATMUL_BENCH(BM_Matmul_FP32_Hwaro);
HWARO_MATMUL_BENCH(BM_Matmul_FP32_cuBLAS);
HWARO_MATMUL_BENCH(BM_Matmul_TF32_Hwaro);
HWARO_MATMUL_BENCH(BM_Matmul_TF32_cuBLAS);
HWARO_MATMUL_BENCH(BM_Matmul_BF16_Hwaro);
HWARO_MATMUL_BENCH(BM_Matmul_BF16_cuBLAS);
#undef HWARO_MATMUL_BENCH

// out = a + b in float32: 12 bytes moved per element.
void BM_Add_FP32_Hwaro(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const std::int64_t n = state.range(0);
  const hw::Tensor a = hw::randn({n}, {.device = kGpu});
  const hw::Tensor b = hw::randn({n}, {.device = kGpu});
  time_on_gpu(state, [&] { benchmark::DoNotOptimize(hw::add(a, b)); });
  state.SetBytesProcessed(state.iterations() * n * 12);
}

// The ceiling: a device-to-device copy reads and writes 8 bytes per float32 element.
void BM_Memcpy_D2D(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const std::int64_t n = state.range(0);
  const hw::Tensor a = hw::randn({n}, {.device = kGpu});
  const hw::Tensor out = hw::empty({n}, {.device = kGpu});
  cudaError_t status = cudaSuccess;
  time_on_gpu(state, [&] {
    status = cudaMemcpyAsync(out.data_ptr(), a.data_ptr(), static_cast<std::size_t>(n) * 4, cudaMemcpyDeviceToDevice,
                             current_stream());
  });
  if (status != cudaSuccess) state.SkipWithError(cudaGetErrorString(status));
  state.SetBytesProcessed(state.iterations() * n * 8);
}
BENCHMARK(BM_Add_FP32_Hwaro)->Arg(64 << 20)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memcpy_D2D)->Arg(64 << 20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Host time per one-element add (dispatch, output allocation from the cache, launch), with the
// stream drained once per batch of 1000 so the queue never fills.
void BM_LaunchOverhead_Add1(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const hw::Tensor a = hw::ones({1}, {.device = kGpu});
  const hw::Tensor b = hw::ones({1}, {.device = kGpu});
  benchmark::DoNotOptimize(hw::add(a, b));
  hw::cuda::synchronize();
  std::int64_t count = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hw::add(a, b));
    if (++count % 1000 == 0) hw::cuda::synchronize();
  }
  hw::cuda::synchronize();
}
BENCHMARK(BM_LaunchOverhead_Add1)->Unit(benchmark::kMicrosecond);

}  // namespace
