// 2-D window kernels on the CPU: Im2col and Col2im (convolution as one GEMM, and its adjoint) and
// MaxPool2d. ints = kh, kw, sh, sw, ph, pw, dh, dw; the index math is kernels/window2d.h's.
//
// Im2col writes one row of a tap (c, ki, kj) for one image at a time: the valid stretch of each
// output row is found once, so the inner loop is a plain strided copy (a vectorised one for
// stride 1) and the padding a fill. Tasks (tap, image) go to the thread pool.
// Col2im gives each (image, channel) plane to one task, which adds every tap's rows into it:
// no two tasks write the same element, so no atomics and a deterministic sum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/kernel_coverage.h"
#include "cpu/kernel_families.h"
#include "cpu/select_bits.h"
#include "cpu/thread_pool.h"
#include "kernels/cast.h"
#include "kernels/window2d.h"

namespace hwaro::cpu {
namespace {

using kernels::Window2d;

// Tasks per chunk so that a chunk holds about kElementwiseGrain elements of work.
std::int64_t grain_for(std::int64_t work_per_task) {
  return std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(1, work_per_task));
}

// tensors: cols [N, C*kh*kw, L] (any strides but the last, which is 1), x [N, C, H, W] contiguous.
template <typename T> struct Im2colKernel {
  static void run(const KernelArgs& args) {
    const TensorView& cols = args[0];
    const TensorView& x = args[1];
    const Window2d g = Window2d::from_ints(args.ints);
    const std::int64_t n = x.sizes[0], c = x.sizes[1], h = x.sizes[2], w = x.sizes[3];
    const std::int64_t oh = g.out_height(h), ow = g.out_width(w);
    const std::int64_t taps = c * g.kh * g.kw;
    const T* in = x.ptr<const T>();
    T* out = cols.ptr<T>();
    const std::int64_t col_n = cols.strides[0], col_tap = cols.strides[1];
    parallel_for(0, taps * n, grain_for(oh * ow), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t task = begin; task < end; ++task) {
        const std::int64_t tap = task / n, image = task % n;
        const std::int64_t channel = tap / (g.kh * g.kw), ki = (tap / g.kw) % g.kh, kj = tap % g.kw;
        const T* plane = in + (image * c + channel) * h * w;
        T* row_out = out + image * col_n + tap * col_tap;
        std::int64_t j0 = 0, j1 = 0;
        const std::int64_t col_offset = kj * g.dw - g.pw;
        kernels::valid_outputs(col_offset, g.sw, w, ow, j0, j1);
        for (std::int64_t i = 0; i < oh; ++i, row_out += ow) {
          const std::int64_t r = i * g.sh - g.ph + ki * g.dh;
          if (r < 0 || r >= h) {
            std::fill(row_out, row_out + ow, T(0));
            continue;
          }
          const T* src = plane + r * w + col_offset;
          std::fill(row_out, row_out + j0, T(0));
          if (g.sw == 1) {
            std::copy(src + j0, src + j1, row_out + j0);
          } else {
            for (std::int64_t j = j0; j < j1; ++j) row_out[j] = src[j * g.sw];
          }
          std::fill(row_out + j1, row_out + ow, T(0));
        }
      }
    });
  }
};

// tensors: x [N, C, H, W] contiguous (overwritten), cols [N, C*kh*kw, L] (last stride 1).
template <typename T> struct Col2imKernel {
  static void run(const KernelArgs& args) {
    using Acc = kernels::compute_t<T>;
    const TensorView& x = args[0];
    const TensorView& cols = args[1];
    const Window2d g = Window2d::from_ints(args.ints);
    const std::int64_t n = x.sizes[0], c = x.sizes[1], h = x.sizes[2], w = x.sizes[3];
    const std::int64_t oh = g.out_height(h), ow = g.out_width(w);
    const T* in = cols.ptr<const T>();
    T* out = x.ptr<T>();
    const std::int64_t col_n = cols.strides[0], col_tap = cols.strides[1];
    const std::int64_t taps_per_channel = g.kh * g.kw;
    parallel_for(0, n * c, grain_for(taps_per_channel * oh * ow), [&](std::int64_t begin, std::int64_t end) {
      std::vector<Acc> plane(static_cast<std::size_t>(h * w));  // summed in the compute type
      for (std::int64_t task = begin; task < end; ++task) {
        const std::int64_t image = task / c, channel = task % c;
        std::fill(plane.begin(), plane.end(), Acc(0));
        for (std::int64_t ki = 0; ki < g.kh; ++ki) {
          for (std::int64_t kj = 0; kj < g.kw; ++kj) {
            const std::int64_t tap = channel * taps_per_channel + ki * g.kw + kj;
            const T* row_in = in + image * col_n + tap * col_tap;
            std::int64_t j0 = 0, j1 = 0;
            const std::int64_t col_offset = kj * g.dw - g.pw;
            kernels::valid_outputs(col_offset, g.sw, w, ow, j0, j1);
            for (std::int64_t i = 0; i < oh; ++i, row_in += ow) {
              const std::int64_t r = i * g.sh - g.ph + ki * g.dh;
              if (r < 0 || r >= h) continue;
              Acc* dst = plane.data() + r * w + col_offset;
              for (std::int64_t j = j0; j < j1; ++j) dst[j * g.sw] += static_cast<Acc>(row_in[j]);
            }
          }
        }
        T* plane_out = out + task * h * w;
        for (std::int64_t e = 0; e < h * w; ++e) plane_out[e] = kernels::cast_value<T>(plane[e]);
      }
    });
  }
};

// Max pooling of one [h, w] plane whose windows all lie inside it: for each window, the first
// maximum in (ki, kj) order, or the last NaN, and its index r * w + c, as kernels::window_max.
// One output row at a time, tap by tap across the row with selects instead of branches, so that
// the loop over j vectorises (a branch on random data mispredicts about half the time).
// best and best_index are scratch rows of ow elements.
template <typename T>
void max_pool_plane_inside(const T* plane, std::int64_t w, std::int64_t oh, std::int64_t ow, const Window2d& g,
                           T* values, std::int64_t* where, kernels::compute_t<T>* best, std::int64_t* best_index) {
  using Acc = kernels::compute_t<T>;
  for (std::int64_t i = 0; i < oh; ++i) {
    const std::int64_t row0 = i * g.sh * w, sw = g.sw;
    for (std::int64_t j = 0; j < ow; ++j) {
      best[j] = static_cast<Acc>(plane[row0 + j * sw]);
      best_index[j] = row0 + j * sw;
    }
    for (std::int64_t ki = 0; ki < g.kh; ++ki) {
      for (std::int64_t kj = 0; kj < g.kw; ++kj) {
        const std::int64_t tap = row0 + ki * w + kj;
        for (std::int64_t j = 0; j < ow; ++j) {
          const std::int64_t at = tap + j * sw;
          const Acc v = static_cast<Acc>(plane[at]);
          const bool take = (v > best[j]) | (v != v);  // a later NaN takes over, as window_max
          best[j] = select_bits(take, v, best[j]);
          best_index[j] = select_bits(take, at, best_index[j]);
        }
      }
    }
    for (std::int64_t j = 0; j < ow; ++j) {
      values[i * ow + j] = kernels::cast_value<T>(best[j]);
      where[i * ow + j] = best_index[j];
    }
  }
}

// MaxPool2d(2), the CNN's pooling (kernel 2x2, stride 2, no padding or dilation): each output
// reads a 2x2 block of two input rows, its four taps in (ki, kj) order with the rule above. The
// winner is kept as a 32-bit tap number (0..3) beside a 32-bit float maximum, so that the loop
// over a row vectorises with lanes of one width; the int64 indices are made from it afterwards.
// `tap` is a scratch row of ow elements.
template <typename T>
void max_pool_plane_2x2(const T* plane, std::int64_t w, std::int64_t oh, std::int64_t ow, T* values,
                        std::int64_t* where, std::int32_t* tap) {
  using Acc = kernels::compute_t<T>;
  for (std::int64_t i = 0; i < oh; ++i) {
    const T* top = plane + 2 * i * w;
    const T* bottom = top + w;
    T* row_values = values + i * ow;
    for (std::int64_t j = 0; j < ow; ++j) {
      Acc best = static_cast<Acc>(top[2 * j]);
      std::int32_t winner = 0;
      const Acc taps[3] = {static_cast<Acc>(top[2 * j + 1]), static_cast<Acc>(bottom[2 * j]),
                           static_cast<Acc>(bottom[2 * j + 1])};
      for (std::int32_t t = 0; t < 3; ++t) {
        const bool take = (taps[t] > best) | (taps[t] != taps[t]);  // a later NaN takes over, as window_max
        best = select_bits(take, taps[t], best);
        winner = select_bits(take, t + 1, winner);
      }
      row_values[j] = kernels::cast_value<T>(best);
      tap[j] = winner;
    }
    const std::int64_t row0 = 2 * i * w;
    for (std::int64_t j = 0; j < ow; ++j) {
      where[i * ow + j] = row0 + 2 * j + (tap[j] & 1) + (tap[j] >> 1) * w;
    }
  }
}

// tensors: out [N, C, oh, ow], indices int64 [N, C, oh, ow], x [N, C, H, W]; all contiguous.
template <typename T> struct MaxPool2dKernel {
  static void run(const KernelArgs& args) {
    using Acc = kernels::compute_t<T>;
    const TensorView& out = args[0];
    const TensorView& indices = args[1];
    const TensorView& x = args[2];
    const Window2d g = Window2d::from_ints(args.ints);
    const std::int64_t planes = x.sizes[0] * x.sizes[1], h = x.sizes[2], w = x.sizes[3];
    const std::int64_t oh = out.sizes[2], ow = out.sizes[3];
    const T* in = x.ptr<const T>();
    T* values = out.ptr<T>();
    std::int64_t* where = indices.ptr<std::int64_t>();
    // Without padding or dilation, and with the floor-rounded output size (ceil_mode's last window
    // hangs over the edge), every tap lies inside the input, so the common MaxPool2d(k) skips
    // window_max's bounds checks; same tap order, same NaN rule.
    const bool all_taps_inside = g.ph == 0 && g.pw == 0 && g.dh == 1 && g.dw == 1 && oh == g.out_height(h) &&
                                 ow == g.out_width(w);
    const bool two_by_two = all_taps_inside && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2;
    parallel_for(0, planes, grain_for(oh * ow * g.kh * g.kw), [&](std::int64_t begin, std::int64_t end) {
      std::vector<Acc> best_row(all_taps_inside && !two_by_two ? static_cast<std::size_t>(ow) : 0);
      std::vector<std::int64_t> best_index_row(best_row.size());
      std::vector<std::int32_t> tap_row(two_by_two ? static_cast<std::size_t>(ow) : 0);
      for (std::int64_t p = begin; p < end; ++p) {
        const T* plane = in + p * h * w;
        if (two_by_two) {
          max_pool_plane_2x2(plane, w, oh, ow, values + p * oh * ow, where + p * oh * ow, tap_row.data());
          continue;
        }
        if (all_taps_inside) {
          max_pool_plane_inside(plane, w, oh, ow, g, values + p * oh * ow, where + p * oh * ow, best_row.data(),
                                best_index_row.data());
          continue;
        }
        for (std::int64_t i = 0; i < oh; ++i) {
          for (std::int64_t j = 0; j < ow; ++j) {
            Acc best;
            std::int64_t best_index;
            kernels::window_max(plane, h, w, g, i, j, best, best_index);
            const std::int64_t o = (p * oh + i) * ow + j;
            values[o] = kernels::cast_value<T>(best);
            where[o] = best_index;
          }
        }
      }
    });
  }
};

}  // namespace

void register_window_kernels(KernelTable& table) { HWARO_WINDOW_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cpu
