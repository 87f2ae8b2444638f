// Peak float32 throughput of the CPU (measured) and of a GPU (from its properties).
#include "device_peak.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <sstream>
#include <thread>
#include <vector>

#include "hwaro/hwaro.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HWARO_BENCH_X86 1
#endif

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

#ifdef HWARO_BENCH_X86
// Independent accumulators, at least FMA latency (4-5 cycles) x FMA ports (2), so the chains
// never wait on each other and the loop is bound by FMA throughput alone; and few enough to stay
// in registers with the two constants: 16 of AVX-512's 32, 12 of AVX2's 16 (16 AVX2 chains spill
// to the stack, which measured a Zen core at two thirds of its peak, below what OpenBLAS reaches).
// a*x+b with a just under 1 converges to b/(1-a): no overflow, no denormals.
constexpr int kChainsAvx512 = 16;
constexpr int kChainsAvx2 = 12;
constexpr long kItersPerCall = 1 << 18;

__attribute__((target("avx512f"))) float fma_loop_avx512(long iterations) {
  __m512 acc[kChainsAvx512];
  for (int c = 0; c < kChainsAvx512; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChainsAvx512; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  for (int c = 1; c < kChainsAvx512; ++c) acc[0] = _mm512_add_ps(acc[0], acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc[0]);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iterations) {
  __m256 acc[kChainsAvx2];
  for (int c = 0; c < kChainsAvx2; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChainsAvx2; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  for (int c = 1; c < kChainsAvx2; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

// CPU time of the calling thread. The rate per second of CPU time is what a core does while it
// runs, whether or not a neighbour on a shared machine takes turns on it.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// GFLOP/s of `threads` threads each running `loop` (`chains` accumulators of `lanes` floats) for about
// `cpu_seconds` of CPU time, started together.
double measure_threads(int threads, float (*loop)(long), int lanes, int chains, double cpu_seconds) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> flops(static_cast<std::size_t>(threads), 0.0);
  std::vector<double> seconds(static_cast<std::size_t>(threads), 0.0);
  volatile float sink = 0;  // keeps the loops' results alive
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      const double start = thread_cpu_seconds();
      double elapsed = 0;
      long calls = 0;
      float result = 0;
      while (elapsed < cpu_seconds) {
        result += loop(kItersPerCall);
        ++calls;
        elapsed = thread_cpu_seconds() - start;
      }
      sink = result;
      flops[static_cast<std::size_t>(t)] = static_cast<double>(calls) * kItersPerCall * chains * lanes * 2.0;
      seconds[static_cast<std::size_t>(t)] = elapsed;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true);
  for (auto& th : pool) th.join();
  (void)sink;
  // Each thread's own rate, summed: with one thread per core this is the cores' combined peak.
  double gflops = 0;
  for (int t = 0; t < threads; ++t) gflops += flops[static_cast<std::size_t>(t)] / seconds[static_cast<std::size_t>(t)] / 1e9;
  return gflops;
}
#endif

}  // namespace

PeakEstimate cpu_peak(int threads, int trials, double seconds_per_trial) {
#ifdef HWARO_BENCH_X86
  HWARO_CHECK(threads >= 1 && trials >= 1 && seconds_per_trial > 0,
              "cpu_peak: expected at least one thread, one trial and a positive duration, found ", threads,
              " threads, ", trials, " trials of ", seconds_per_trial, " s");
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) return {std::nullopt, "n/a: this CPU has neither AVX-512 nor AVX2 with FMA"};
  // Both vector widths where both exist: some CPUs clock AVX-512 down or have one 512-bit FMA
  // unit, so 256-bit FMAs can be the faster of the two; the peak is the faster.
  double best = 0;
  const char* isa = "";
  auto keep_faster = [&](double gflops, const char* name) {
    if (gflops > best) {
      best = gflops;
      isa = name;
    }
  };
  for (int trial = 0; trial < trials; ++trial) {
    if (avx512) keep_faster(measure_threads(threads, fma_loop_avx512, 16, kChainsAvx512, seconds_per_trial), "AVX-512");
    if (avx2) keep_faster(measure_threads(threads, fma_loop_avx2, 8, kChainsAvx2, seconds_per_trial), "AVX2");
  }
  std::ostringstream how;
  how << "measured: " << threads << " thread(s) of " << isa << " FMA chains at once (the faster of "
      << (avx512 && avx2 ? "AVX-512 and AVX2" : isa) << "), per second of CPU time, best of " << trials;
  return {best, how.str()};
#else
  (void)threads, (void)trials, (void)seconds_per_trial;
  return {std::nullopt, "n/a: the FMA peak measurement is written for x86 vector units only"};
#endif
}

std::optional<int> fp32_flops_per_clock_per_sm(int major, int minor) {
  // float32 lanes per multiprocessor, from NVIDIA's CUDA programming guide (arithmetic
  // instruction throughput table); one FMA is 2 FLOPs.
  int lanes = 0;
  if (major == 6) lanes = minor == 0 ? 64 : 128;         // Pascal: P100 / consumer
  else if (major == 7) lanes = 64;                        // Volta, Turing
  else if (major == 8) lanes = minor == 0 ? 64 : 128;     // A100 / Ampere consumer, Ada
  else if (major == 9 || major == 10 || major == 12) lanes = 128;  // Hopper, Blackwell
  if (lanes == 0) return std::nullopt;
  return 2 * lanes;
}

PeakEstimate gpu_peak(int device_index) {
  const hw::cuda::DeviceProperties p = hw::cuda::get_device_properties(device_index);
  const auto per_clock = fp32_flops_per_clock_per_sm(p.major, p.minor);
  std::ostringstream cc;
  cc << p.major << "." << p.minor;
  if (!per_clock) return {std::nullopt, "n/a: compute capability " + cc.str() + " is not in hwaro's table"};
  if (p.clock_rate_khz <= 0) return {std::nullopt, "n/a: the driver did not report the SM clock"};
  const double gflops = static_cast<double>(p.multi_processor_count) * p.clock_rate_khz * 1e3 * *per_clock / 1e9;
  std::ostringstream how;
  how << "from properties: " << p.multi_processor_count << " SMs x " << p.clock_rate_khz / 1000 << " MHz x " << *per_clock
      << " float32 FLOPs/clock (compute capability " << cc.str() << ")";
  return {gflops, how.str()};
}

}  // namespace hwaro_cli
