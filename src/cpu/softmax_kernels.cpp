// Softmax and LogSoftmax on the CPU: out [outer, R, inner], in [outer, R, inner], both contiguous,
// ints = outer, R, inner. Numerically stable: each slice has its maximum subtracted before exp.
//
// The last-dim case (inner == 1) is the one that matters (attention, cross-entropy): rows go to
// threads, and float rows use an exp that GCC vectorises (glibc's expf is a scalar call).
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/thread_pool.h"
#include "kernels/cast.h"

namespace hwaro::cpu {
namespace {

// exp(x) for x <= 0 in float, within a few ulp, in plain arithmetic so that a loop over it
// vectorises: 2^n * p(r) with x = n ln2 + r, |r| <= ln2 / 2, p a degree-6 Taylor polynomial.
// Below -87.3 the result is 0 (where expf turns subnormal); NaN of either sign gives NaN.
inline float exp_nonpositive(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer held in the low bits
  constexpr std::uint32_t kLowestBits = 0xC2AE999Au;  // -87.3f
  // Integer tests only: with -ftrapping-math (GCC's default) float compares keep the loop scalar.
  // A negative float below -87.3 has larger bits; NaNs (either sign) are left to propagate.
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t is_nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  const std::uint32_t underflow = 0u - (static_cast<std::uint32_t>(bits > kLowestBits) & (is_nan ^ 1u));  // all ones
  x = std::bit_cast<float>((bits & ~underflow) | (kLowestBits & underflow));
  const float shifted = x * kLog2e + kRound;
  const float n = shifted - kRound;
  // Unsigned arithmetic: for a NaN input these bits are garbage, and must not overflow a signed int.
  const std::uint32_t n_bits = std::bit_cast<std::uint32_t>(shifted) - 0x4B400000u;  // minus kRound's bits: n
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>((n_bits + 127u) << 23);  // 2^n
  // An integer mask rather than a select around the multiply, for the same reason.
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(p * scale) & ~underflow);
}

template <typename C> C exp_shifted(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return exp_nonpositive(x);
  } else {
    return std::exp(x);
  }
}

// Maximum and sum of a contiguous run with kLanes independent lanes, so that GCC vectorises
// them (a single float accumulator forbids reordering). The maximum skips NaNs; exp propagates them.
constexpr int kLanes = 16;
template <typename C> C row_max(const C* x, std::int64_t n) {
  C lane[kLanes];
  for (C& l : lane) l = -std::numeric_limits<C>::infinity();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  }
  for (; i < n; ++i) lane[0] = x[i] > lane[0] ? x[i] : lane[0];
  C m = lane[0];
  for (int j = 1; j < kLanes; ++j) m = lane[j] > m ? lane[j] : m;
  return m;
}
template <typename C> C row_sum(const C* x, std::int64_t n) {
  C lane[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] += x[i + j];
  }
  for (; i < n; ++i) lane[0] += x[i];
  C sum = 0;
  for (C l : lane) sum += l;
  return sum;
}

// One contiguous row of n elements in the compute type C; out must not overlap x.
template <bool kLog, typename C> void softmax_row(const C* x, C* out, std::int64_t n) {
  const C m = row_max(x, n);
  if (!std::isfinite(m)) {
    // All -inf (exp(-inf - -inf) is NaN, as PyTorch) or a +inf present: the exact path.
    C sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - m);
    for (std::int64_t i = 0; i < n; ++i) out[i] = kLog ? x[i] - m - std::log(sum) : std::exp(x[i] - m) / sum;
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) out[i] = exp_shifted(x[i] - m);
  const C sum = row_sum(out, n);
  if constexpr (kLog) {
    // (x - m) is exact near the maximum; folding m into log(sum) first would round it at m's scale.
    const C log_sum = std::log(sum);
    for (std::int64_t i = 0; i < n; ++i) out[i] = (x[i] - m) - log_sum;
  } else {
    const C inv = C(1) / sum;
    for (std::int64_t i = 0; i < n; ++i) out[i] *= inv;
  }
}

// A [R, inner] slice reduced along R, kTile columns at a time; the column vectors vectorise.
template <bool kLog, typename T> void softmax_columns(const T* x, T* out, std::int64_t r, std::int64_t inner,
                                                     std::int64_t c0, std::int64_t w) {
  using C = kernels::compute_t<T>;
  constexpr std::int64_t kTile = 64;
  C m[kTile], sum[kTile];
  for (std::int64_t j = 0; j < w; ++j) {
    m[j] = -std::numeric_limits<C>::infinity();
    sum[j] = 0;
  }
  for (std::int64_t k = 0; k < r; ++k) {
    const T* row = x + k * inner + c0;
    for (std::int64_t j = 0; j < w; ++j) {
      const C v = static_cast<C>(row[j]);
      m[j] = v > m[j] ? v : m[j];
    }
  }
  for (std::int64_t k = 0; k < r; ++k) {
    const T* row = x + k * inner + c0;
    for (std::int64_t j = 0; j < w; ++j) sum[j] += std::exp(static_cast<C>(row[j]) - m[j]);
  }
  for (std::int64_t j = 0; j < w; ++j) sum[j] = kLog ? std::log(sum[j]) : C(1) / sum[j];
  for (std::int64_t k = 0; k < r; ++k) {
    const T* row = x + k * inner + c0;
    T* orow = out + k * inner + c0;
    for (std::int64_t j = 0; j < w; ++j) {
      const C v = static_cast<C>(row[j]);
      orow[j] = kernels::cast_value<T>(kLog ? (v - m[j]) - sum[j] : std::exp(v - m[j]) * sum[j]);
    }
  }
}

template <bool kLog> struct SoftmaxFamily {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      using C = kernels::compute_t<T>;
      T* out = args[0].ptr<T>();
      const T* in = args[1].ptr<const T>();
      const std::int64_t outer = args.ints[0], r = args.ints[1], inner = args.ints[2];
      if (outer * r * inner == 0) return;
      if (inner == 1) {
        parallel_for(0, outer, std::max<std::int64_t>(1, kElementwiseGrain / (4 * r)), [&](std::int64_t b, std::int64_t e) {
          if constexpr (std::is_same_v<T, C>) {
            for (std::int64_t o = b; o < e; ++o) softmax_row<kLog>(in + o * r, out + o * r, r);
          } else {  // 16-bit floats: the row is widened to float, computed, and narrowed
            std::vector<C> wide(static_cast<std::size_t>(2 * r));
            for (std::int64_t o = b; o < e; ++o) {
              for (std::int64_t i = 0; i < r; ++i) wide[i] = static_cast<C>(in[o * r + i]);
              softmax_row<kLog>(wide.data(), wide.data() + r, r);
              for (std::int64_t i = 0; i < r; ++i) out[o * r + i] = kernels::cast_value<T>(wide[r + i]);
            }
          }
        });
        return;
      }
      constexpr std::int64_t kTile = 64;
      const std::int64_t tiles = (inner + kTile - 1) / kTile;
      parallel_for(0, outer * tiles, std::max<std::int64_t>(1, kElementwiseGrain / (4 * r * kTile)),
                   [&](std::int64_t b, std::int64_t e) {
                     for (std::int64_t task = b; task < e; ++task) {
                       const std::int64_t o = task / tiles, c0 = (task % tiles) * kTile;
                       softmax_columns<kLog>(in + o * r * inner, out + o * r * inner, r, inner, c0,
                                             std::min(kTile, inner - c0));
                     }
                   });
    }
  };
};

}  // namespace

void register_softmax_kernels(KernelTable& table) { HWARO_SOFTMAX_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
