// 2-D window kernels on CUDA: Im2col, Col2im and MaxPool2d, one thread per output element, with
// the CPU's index math (kernels/window2d.h). ints = kh, kw, sh, sw, ph, pw, dh, dw.
//
// Col2im is a gather: each thread owns one input element and sums the column entries that read
// it, so no atomics and the same sum order on every run. These serve convolution where the
// build has no cuDNN or HWARO_CUDNN=off (its GEMMs then go through cuBLAS, the Matmul kernel);
// with cuDNN, convolution is conv_kernels.cpp.
#include <cstdint>

#include "core/kernel_coverage.h"
#include "cuda/kernel_families.h"
#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"
#include "kernels/cast.h"
#include "kernels/window2d.h"

namespace hwaro::cuda {
namespace {

using kernels::Window2d;

// One thread per column element (image, tap, l); neighbouring threads write neighbouring l.
template <typename T>
__global__ void im2col_kernel(T* cols, const T* x, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
                              std::int64_t oh, std::int64_t ow, std::int64_t col_n, std::int64_t col_tap,
                              Window2d g) {
  const std::int64_t taps = c * g.kh * g.kw, l_count = oh * ow;
  const std::int64_t total = n * taps * l_count;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::int64_t l = e % l_count, tap = (e / l_count) % taps, image = e / (l_count * taps);
    const std::int64_t channel = tap / (g.kh * g.kw), ki = (tap / g.kw) % g.kh, kj = tap % g.kw;
    const T* plane = x + (image * c + channel) * h * w;
    cols[image * col_n + tap * col_tap + l] = kernels::window_tap(plane, h, w, g, ki, kj, l / ow, l % ow);
  }
}

template <typename T> struct ColumnsOfPlane {
  const T* base;  // the first tap of this plane's channel for this image
  std::int64_t tap_stride;
  __device__ T operator()(std::int64_t tap, std::int64_t l) const { return base[tap * tap_stride + l]; }
};

// One thread per input element (image, channel, r, c).
template <typename T>
__global__ void col2im_kernel(T* x, const T* cols, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
                              std::int64_t oh, std::int64_t ow, std::int64_t col_n, std::int64_t col_tap,
                              Window2d g) {
  using Acc = kernels::compute_t<T>;
  const std::int64_t total = n * c * h * w;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::int64_t col = e % w, row = (e / w) % h, channel = (e / (h * w)) % c, image = e / (c * h * w);
    const ColumnsOfPlane<T> plane_cols{cols + image * col_n + channel * g.kh * g.kw * col_tap, col_tap};
    x[e] = kernels::cast_value<T>(kernels::col2im_element<Acc>(plane_cols, row, col, oh, ow, g));
  }
}

// One thread per output element (plane, i, j).
template <typename T>
__global__ void max_pool2d_kernel(T* out, std::int64_t* indices, const T* x, std::int64_t planes, std::int64_t h,
                                  std::int64_t w, std::int64_t oh, std::int64_t ow, Window2d g) {
  using Acc = kernels::compute_t<T>;
  const std::int64_t total = planes * oh * ow;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::int64_t j = e % ow, i = (e / ow) % oh, p = e / (oh * ow);
    Acc best;
    std::int64_t best_index;
    kernels::window_max(x + p * h * w, h, w, g, i, j, best, best_index);
    out[e] = kernels::cast_value<T>(best);
    indices[e] = best_index;
  }
}

// A grid-stride loop covers the rest, so the grid is capped well below the 2^31 block limit.
unsigned capped_grid(std::int64_t n) {
  const unsigned blocks = grid_for(n);
  return blocks > 65535u * 32u ? 65535u * 32u : blocks;
}

template <typename T> struct Im2colKernel {
  static void run(const KernelArgs& args) {
    const TensorView& cols = args[0];
    const TensorView& x = args[1];
    const Window2d g = Window2d::from_ints(args.ints);
    if (cols.numel() == 0) return;
    set_device_of(args);
    im2col_kernel<T><<<capped_grid(cols.numel()), kBlockSize, 0, stream_of(args)>>>(
        cols.ptr<T>(), x.ptr<const T>(), x.sizes[0], x.sizes[1], x.sizes[2], x.sizes[3], g.out_height(x.sizes[2]),
        g.out_width(x.sizes[3]), cols.strides[0], cols.strides[1], g);
    HWARO_CUDA_CHECK_LAUNCH();
  }
};

template <typename T> struct Col2imKernel {
  static void run(const KernelArgs& args) {
    const TensorView& x = args[0];
    const TensorView& cols = args[1];
    const Window2d g = Window2d::from_ints(args.ints);
    if (x.numel() == 0) return;
    set_device_of(args);
    col2im_kernel<T><<<capped_grid(x.numel()), kBlockSize, 0, stream_of(args)>>>(
        x.ptr<T>(), cols.ptr<const T>(), x.sizes[0], x.sizes[1], x.sizes[2], x.sizes[3], g.out_height(x.sizes[2]),
        g.out_width(x.sizes[3]), cols.strides[0], cols.strides[1], g);
    HWARO_CUDA_CHECK_LAUNCH();
  }
};

template <typename T> struct MaxPool2dKernel {
  static void run(const KernelArgs& args) {
    const TensorView& out = args[0];
    const TensorView& x = args[2];
    const Window2d g = Window2d::from_ints(args.ints);
    if (out.numel() == 0) return;
    set_device_of(args);
    max_pool2d_kernel<T><<<capped_grid(out.numel()), kBlockSize, 0, stream_of(args)>>>(
        out.ptr<T>(), args[1].ptr<std::int64_t>(), x.ptr<const T>(), x.sizes[0] * x.sizes[1], x.sizes[2], x.sizes[3],
        out.sizes[2], out.sizes[3], g);
    HWARO_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void register_window_kernels(KernelTable& table) { HWARO_WINDOW_KERNELS(HWARO_REGISTER_KERNEL) }

}  // namespace hwaro::cuda
