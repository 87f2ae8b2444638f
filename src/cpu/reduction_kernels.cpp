// Sum, Prod, All, Any, Max and Min on the CPU. Every kernel sees its input as a contiguous
// [outer, R, inner] block (ints = outer, R, inner) and writes a contiguous [outer, inner] output;
// the op entry points arrange that. The combine steps are kernels/reduce_ops.h.
//
// Accuracy: a run of R elements is cut into blocks of kBlock; each block is summed with kLanes
// independent accumulators (which GCC vectorises) and the block results are folded pairwise, so
// a float32 sum's rounding error grows far slower than R * eps. The partition depends only on R,
// never on the thread count, so results are reproducible.
#include <algorithm>
#include <vector>

#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/thread_pool.h"
#include "hwaro/errors.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace hwaro::cpu {
namespace {

constexpr int kLanes = 16;
constexpr std::int64_t kBlock = 1024;    // elements of a run summed before the pairwise fold
constexpr std::int64_t kTile = 64;       // columns of an inner > 1 reduction handled together
constexpr std::int64_t kRowBlock = 256;  // rows of an inner > 1 reduction before a partial is folded

struct Shape {
  std::int64_t outer, r, inner;
};
Shape shape_of(const KernelArgs& args) { return {args.ints[0], args.ints[1], args.ints[2]}; }

// One block (n <= kBlock) of a contiguous run.
template <typename Op, typename Acc, typename Load, typename In>
Acc reduce_block(const In* x, std::int64_t n, Load load) {
  Acc acc[kLanes];
  for (Acc& a : acc) a = Op::template identity<Acc>();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] = Op::combine(acc[j], load(x[i + j]));
  }
  for (; i < n; ++i) acc[0] = Op::combine(acc[0], load(x[i]));
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) acc[j] = Op::combine(acc[j], acc[j + width]);
  }
  return acc[0];
}

// Pairwise fold of blocks [lo, hi) of a run of n elements; each leaf is one block.
template <typename Op, typename Acc, typename Load, typename In>
Acc reduce_blocks(const In* x, std::int64_t n, std::int64_t lo, std::int64_t hi, Load load) {
  if (hi - lo == 1) return reduce_block<Op, Acc>(x + lo * kBlock, std::min(kBlock, n - lo * kBlock), load);
  const std::int64_t mid = lo + (hi - lo) / 2;
  return Op::combine(reduce_blocks<Op, Acc>(x, n, lo, mid, load), reduce_blocks<Op, Acc>(x, n, mid, hi, load));
}

// The same fold over precomputed block results.
template <typename Op, typename Acc> Acc fold_partials(const std::vector<Acc>& p, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return p[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return Op::combine(fold_partials<Op, Acc>(p, lo, mid), fold_partials<Op, Acc>(p, mid, hi));
}

template <typename Op, typename Acc, typename Out, typename In, typename Load>
void reduce(const In* in, Out* out, Shape s, Load load) {
  if (s.outer * s.inner == 0) return;
  if (s.r == 0) {
    for (std::int64_t i = 0; i < s.outer * s.inner; ++i) out[i] = kernels::cast_value<Out>(Op::template identity<Acc>());
    return;
  }
  const std::int64_t nblocks = (s.r + kBlock - 1) / kBlock;
  if (s.inner == 1 && s.outer == 1) {  // one long run: its blocks go to threads, the fold stays ordered
    std::vector<Acc> partials(static_cast<std::size_t>(nblocks));
    parallel_for(0, nblocks, std::max<std::int64_t>(1, kElementwiseGrain / kBlock), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t k = b; k < e; ++k) {
        partials[k] = reduce_block<Op, Acc>(in + k * kBlock, std::min(kBlock, s.r - k * kBlock), load);
      }
    });
    out[0] = kernels::cast_value<Out>(fold_partials<Op, Acc>(partials, 0, partials.size()));
    return;
  }
  if (s.inner == 1) {  // rows
    const std::int64_t grain = std::max<std::int64_t>(1, kElementwiseGrain / s.r);
    parallel_for(0, s.outer, grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t o = b; o < e; ++o) {
        out[o] = kernels::cast_value<Out>(reduce_blocks<Op, Acc>(in + o * s.r, s.r, 0, nblocks, load));
      }
    });
    return;
  }
  // inner > 1: kTile columns at a time, rows accumulated into a block partial, folded every kRowBlock rows.
  const std::int64_t tiles = (s.inner + kTile - 1) / kTile;
  const std::int64_t grain = std::max<std::int64_t>(1, kElementwiseGrain / (s.r * kTile));
  parallel_for(0, s.outer * tiles, grain, [&](std::int64_t b, std::int64_t e) {
    Acc total[kTile], part[kTile];
    for (std::int64_t task = b; task < e; ++task) {
      const std::int64_t o = task / tiles, c0 = (task % tiles) * kTile;
      const std::int64_t w = std::min(kTile, s.inner - c0);
      const In* base = in + o * s.r * s.inner + c0;
      for (std::int64_t j = 0; j < w; ++j) total[j] = Op::template identity<Acc>();
      for (std::int64_t r0 = 0; r0 < s.r; r0 += kRowBlock) {
        for (std::int64_t j = 0; j < w; ++j) part[j] = Op::template identity<Acc>();
        const std::int64_t r1 = std::min(s.r, r0 + kRowBlock);
        for (std::int64_t r = r0; r < r1; ++r) {
          const In* row = base + r * s.inner;
          for (std::int64_t j = 0; j < w; ++j) part[j] = Op::combine(part[j], load(row[j]));
        }
        for (std::int64_t j = 0; j < w; ++j) total[j] = Op::combine(total[j], part[j]);
      }
      for (std::int64_t j = 0; j < w; ++j) out[o * s.inner + c0 + j] = kernels::cast_value<Out>(total[j]);
    }
  });
}

// tensors: out (sum_out_t<T>), in (T)
template <typename Op> struct ArithmeticReduce {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      using Acc = kernels::sum_acc_t<T>;
      using Out = kernels::sum_out_t<T>;
      reduce<Op, Acc>(args[1].ptr<const T>(), args[0].ptr<Out>(), shape_of(args),
                      [](T v) { return kernels::cast_value<Acc>(v); });
    }
  };
};

// tensors: out (bool), in (T)
template <typename Op> struct LogicalReduce {
  template <typename T> struct Kernel {
    static void run(const KernelArgs& args) {
      reduce<Op, bool>(args[1].ptr<const T>(), args[0].ptr<bool>(), shape_of(args),
                       [](T v) { return kernels::cast_value<bool>(v); });
    }
  };
};

// Max/Min with indices: tensors out values (T), out indices (int64), in (T). Values are compared in
// compute_t<T>; a run's blocks are scanned in order and their results combined in order, which
// keeps the first index of the extremum (and of the first NaN).
template <typename Op> struct ExtremumReduce {
  template <typename T> struct Kernel {
    using C = kernels::compute_t<T>;
    using VI = kernels::ValueIndex<C>;

    static VI scan(const T* x, std::int64_t begin, std::int64_t end) {
      VI best{static_cast<C>(x[begin]), begin};
      for (std::int64_t i = begin + 1; i < end; ++i) best = Op::combine(best, VI{static_cast<C>(x[i]), i});
      return best;
    }

    static void run(const KernelArgs& args) {
      T* values = args[0].ptr<T>();
      auto* indices = args[1].ptr<std::int64_t>();
      const T* in = args[2].ptr<const T>();
      const Shape s = shape_of(args);
      if (s.outer * s.inner == 0) return;
      HWARO_ASSERT(s.r > 0, "max/min over an empty dimension must be rejected by the op");
      auto store = [&](std::int64_t i, VI v) {
        values[i] = kernels::cast_value<T>(v.value);
        indices[i] = v.index;
      };
      if (s.inner == 1 && s.outer == 1) {
        const std::int64_t nblocks = (s.r + kBlock - 1) / kBlock;
        std::vector<VI> partials(static_cast<std::size_t>(nblocks));
        parallel_for(0, nblocks, std::max<std::int64_t>(1, kElementwiseGrain / kBlock), [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t k = b; k < e; ++k) partials[k] = scan(in, k * kBlock, std::min(s.r, (k + 1) * kBlock));
        });
        VI best = partials[0];
        for (std::size_t k = 1; k < partials.size(); ++k) best = Op::combine(best, partials[k]);
        store(0, best);
        return;
      }
      if (s.inner == 1) {
        parallel_for(0, s.outer, std::max<std::int64_t>(1, kElementwiseGrain / s.r), [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t o = b; o < e; ++o) store(o, scan(in + o * s.r, 0, s.r));
        });
        return;
      }
      const std::int64_t tiles = (s.inner + kTile - 1) / kTile;
      const std::int64_t grain = std::max<std::int64_t>(1, kElementwiseGrain / (s.r * kTile));
      parallel_for(0, s.outer * tiles, grain, [&](std::int64_t b, std::int64_t e) {
        VI best[kTile];
        for (std::int64_t task = b; task < e; ++task) {
          const std::int64_t o = task / tiles, c0 = (task % tiles) * kTile;
          const std::int64_t w = std::min(kTile, s.inner - c0);
          const T* base = in + o * s.r * s.inner + c0;
          for (std::int64_t j = 0; j < w; ++j) best[j] = VI{static_cast<C>(base[j]), 0};
          for (std::int64_t r = 1; r < s.r; ++r) {
            const T* row = base + r * s.inner;
            for (std::int64_t j = 0; j < w; ++j) best[j] = Op::combine(best[j], VI{static_cast<C>(row[j]), r});
          }
          for (std::int64_t j = 0; j < w; ++j) store(o * s.inner + c0 + j, best[j]);
        }
      });
    }
  };
};

}  // namespace

void register_reduction_kernels(KernelTable& table) { HWARO_REDUCTION_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
