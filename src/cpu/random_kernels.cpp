// RandUniform, RandNormal and RandInt on the CPU: Philox4x32-10, counter-based (kernels/philox.h);
// the value of each element is kernels/random_values.h, shared with CUDA.
// Element i (row-major) depends only on (seed, offset, i), so any split over threads gives the
// same numbers; each thread runs over whole counters and uses their words in order.
#include <algorithm>

#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/strided_loop.h"
#include "kernels/philox.h"
#include "kernels/random_values.h"

namespace hwaro::cpu {
namespace {

// Calls value(c, words, lane) -> T for every element i, c = i / per_counter and lane = i % per_counter,
// storing it at element i of out (contiguous or strided).
template <typename T, typename Value>
void generate(const TensorView& out, std::uint64_t seed, std::uint64_t offset, int per_counter, Value&& value) {
  const std::int64_t n = out.numel();
  if (n == 0) return;
  const std::int64_t counters = static_cast<std::int64_t>(kernels::counters_for(static_cast<std::uint64_t>(n), per_counter));
  const bool contiguous = out.is_contiguous();
  T* base = out.ptr<T>();
  // Strided outputs: the offset in elements of row-major element i.
  auto element_offset = [&out](std::int64_t i) {
    std::int64_t off = 0;
    for (int d = out.ndim; d-- > 0;) {
      off += (i % out.sizes[d]) * out.strides[d];
      i /= out.sizes[d];
    }
    return off;
  };
  // Grain in counters; the per-element work (Philox, a log for normals) is heavier than a copy.
  parallel_for(0, counters, kElementwiseGrain / 16, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      const kernels::Philox4 words = kernels::philox4x32_10(offset + static_cast<std::uint64_t>(c), seed);
      const std::int64_t first = c * per_counter;
      const std::int64_t last = std::min<std::int64_t>(first + per_counter, n);
      for (std::int64_t i = first; i < last; ++i) {
        const T v = value(words, static_cast<int>(i - first));
        if (contiguous) {
          base[i] = v;
        } else {
          base[element_offset(i)] = v;
        }
      }
    }
  });
}

std::uint64_t seed_of(const KernelArgs& args) { return static_cast<std::uint64_t>(args.ints[0]); }
std::uint64_t offset_of(const KernelArgs& args) { return static_cast<std::uint64_t>(args.ints[1]); }

template <typename T> struct UniformKernel {
  // tensors: out. out ~ U[scalars[0], scalars[1])
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    const C low = static_cast<C>(args.scalars[0]);
    const C range = static_cast<C>(args.scalars[1] - args.scalars[0]);
    generate<T>(args[0], seed_of(args), offset_of(args), kernels::values_per_counter(kernels::is_wide_float<T>()),
                [&](const kernels::Philox4& w, int lane) { return kernels::uniform_element<T>(w, lane, low, range); });
  }
};

template <typename T> struct NormalKernel {
  // tensors: out. out ~ N(scalars[0], scalars[1]^2)
  static void run(const KernelArgs& args) {
    using C = kernels::compute_t<T>;
    const C mean = static_cast<C>(args.scalars[0]);
    const C std_dev = static_cast<C>(args.scalars[1]);
    generate<T>(args[0], seed_of(args), offset_of(args), kernels::values_per_counter(kernels::is_wide_float<T>()),
                [&](const kernels::Philox4& w, int lane) { return kernels::normal_element<T>(w, lane, mean, std_dev); });
  }
};

template <typename T> struct RandIntKernel {
  // tensors: out. out ~ integers in [ints[2], ints[3])
  static void run(const KernelArgs& args) {
    const std::int64_t low = args.ints[2];
    const std::uint64_t range = static_cast<std::uint64_t>(args.ints[3]) - static_cast<std::uint64_t>(low);
    const bool wide = kernels::randint_is_wide(low, args.ints[3]);
    generate<T>(args[0], seed_of(args), offset_of(args), kernels::values_per_counter(wide),
                [&](const kernels::Philox4& w, int lane) { return kernels::randint_element<T>(w, lane, wide, low, range); });
  }
};

}  // namespace

void register_random_kernels(KernelTable& table) { HWARO_RANDOM_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
