// Conv2d, Conv2dBackwardInput and Conv2dBackwardWeight on CUDA through cuDNN, the library
// PyTorch's GPU convolutions run on. Tensors arrive contiguous in NCHW / OIHW, which cuDNN takes
// as they are; the first call of each geometry describes its tensors and asks cuDNN's
// heuristics for its ranked algorithms (a plan, cached per thread), and every call runs the best
// one whose workspace the caching allocator can give. The bias gradient is a plain sum
// (channel_sum.cu). Float32 computes in float32 (no TF32) unless hw::cuda::matmul::set_allow_tf32(true)
// switches TF32 on for convolutions too; float16 and bfloat16 accumulate in float32; float64 in
// float64.
//
// This uses cuDNN's descriptor API (cudnnConvolutionForward and its backward twins). cuDNN 9
// marks it deprecated in favour of its graph API, whose usable form is NVIDIA's header-only
// cudnn-frontend, which Debian does not package; the descriptor API still ships in every cuDNN 9.
// Without cuDNN (HWARO_WITH_CUDNN unset) no kernel is registered and nn/functional_conv.cpp takes
// the im2col + cuBLAS path.
#include "cuda/kernel_families.h"

#ifdef HWARO_WITH_CUDNN
#include <cudnn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/backend_registry.h"
#include "cuda/channel_sum.h"
#include "cuda/kernel_launch.h"
#include "cuda/thread_handles.h"
#include "hwaro/cuda.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {
namespace {

#define HWARO_CUDNN_CHECK(call)                                                                          \
  do {                                                                                                   \
    const cudnnStatus_t hwaro_cudnn_status = (call);                                                     \
    if (HWARO_UNLIKELY(hwaro_cudnn_status != CUDNN_STATUS_SUCCESS)) {                                    \
      throw ::hwaro::Error(::hwaro::detail::str_cat("cuDNN error at ", __FILE__, ":", __LINE__, ": ", #call, \
                                                    " failed: ", cudnnGetErrorString(hwaro_cudnn_status)));   \
    }                                                                                                    \
  } while (false)

struct Cudnn {
  using Handle = cudnnHandle_t;
  static constexpr const char* kName = "cuDNN";
  static void create(Handle* h) { HWARO_CUDNN_CHECK(cudnnCreate(h)); }
  static void destroy(Handle h) { cudnnDestroy(h); }
  static void set_stream(Handle h, cudaStream_t stream) { HWARO_CUDNN_CHECK(cudnnSetStream(h, stream)); }
};

// The storage type, the accumulation type and the type of alpha and beta for each dtype.
template <typename T> struct ConvTypes;
template <> struct ConvTypes<float> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_FLOAT, kCompute = CUDNN_DATA_FLOAT;
  using Scale = float;
  static cudnnMathType_t math() { return matmul::allow_tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }
};
template <> struct ConvTypes<double> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_DOUBLE, kCompute = CUDNN_DATA_DOUBLE;
  using Scale = double;
  static cudnnMathType_t math() { return CUDNN_DEFAULT_MATH; }
};
template <> struct ConvTypes<Half> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_HALF, kCompute = CUDNN_DATA_FLOAT;
  using Scale = float;
  static cudnnMathType_t math() { return CUDNN_TENSOR_OP_MATH; }
};
template <> struct ConvTypes<BFloat16> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_BFLOAT16, kCompute = CUDNN_DATA_FLOAT;
  using Scale = float;
  static cudnnMathType_t math() { return CUDNN_TENSOR_OP_MATH; }
};

int to_int(std::int64_t v, const char* what) {
  HWARO_CHECK(v <= INT32_MAX, "conv2d on CUDA: ", what, " of ", v, " is beyond cuDNN's 2^31 limit");
  return static_cast<int>(v);
}

// The descriptors of one convolution: x [N, C, H, W], w [O, C/groups, kh, kw], y [N, O, oh, ow],
// and the window (ints = sh, sw, ph, pw, dh, dw, groups). Destroyed with the call.
class ConvDescriptors {
 public:
  template <typename T>
  static ConvDescriptors make(const TensorView& x, const TensorView& w, const TensorView& y, const KernelArgs& a) {
    using Types = ConvTypes<T>;
    ConvDescriptors d;
    d.set_4d(d.x_, x, Types::kData);
    d.set_4d(d.y_, y, Types::kData);
    HWARO_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w_, Types::kData, CUDNN_TENSOR_NCHW, to_int(w.sizes[0], "a size"),
                                                 to_int(w.sizes[1], "a size"), to_int(w.sizes[2], "a size"),
                                                 to_int(w.sizes[3], "a size")));
    HWARO_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        d.conv_, to_int(a.ints[2], "padding"), to_int(a.ints[3], "padding"), to_int(a.ints[0], "stride"),
        to_int(a.ints[1], "stride"), to_int(a.ints[4], "dilation"), to_int(a.ints[5], "dilation"),
        CUDNN_CROSS_CORRELATION, Types::kCompute));
    HWARO_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv_, to_int(a.ints[6], "groups")));
    HWARO_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv_, Types::math()));
    HWARO_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.bias_, CUDNN_TENSOR_NCHW, Types::kData, 1,
                                                 to_int(w.sizes[0], "a size"), 1, 1));
    return d;
  }
  ConvDescriptors(ConvDescriptors&& o) noexcept : x_(o.x_), y_(o.y_), bias_(o.bias_), w_(o.w_), conv_(o.conv_) {
    o.x_ = o.y_ = o.bias_ = nullptr;
    o.w_ = nullptr;
    o.conv_ = nullptr;
  }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(ConvDescriptors&&) = delete;
  ~ConvDescriptors() {  // the destroy calls only fail on a null or bad descriptor
    if (x_ != nullptr) cudnnDestroyTensorDescriptor(x_);
    if (y_ != nullptr) cudnnDestroyTensorDescriptor(y_);
    if (bias_ != nullptr) cudnnDestroyTensorDescriptor(bias_);
    if (w_ != nullptr) cudnnDestroyFilterDescriptor(w_);
    if (conv_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_);
  }

  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnTensorDescriptor_t y() const { return y_; }
  cudnnTensorDescriptor_t bias() const { return bias_; }  // [1, O, 1, 1]
  cudnnFilterDescriptor_t w() const { return w_; }
  cudnnConvolutionDescriptor_t conv() const { return conv_; }

 private:
  ConvDescriptors() {
    HWARO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_));
    HWARO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_));
    HWARO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias_));
    HWARO_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_));
    HWARO_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_));
  }
  static void set_4d(cudnnTensorDescriptor_t d, const TensorView& t, cudnnDataType_t type) {
    HWARO_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, type, to_int(t.sizes[0], "the batch"),
                                                 to_int(t.sizes[1], "a size"), to_int(t.sizes[2], "a size"),
                                                 to_int(t.sizes[3], "a size")));
  }

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, bias_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
};

// What identifies a convolution for the plan cache: the pass, the three shapes, the window, the
// dtype, the math mode and the device.
using GeometryKey = std::vector<std::int64_t>;
GeometryKey geometry_key(int pass, const TensorView& x, const TensorView& w, const TensorView& y, const KernelArgs& a,
                         cudnnMathType_t math) {
  GeometryKey key = {pass, static_cast<std::int64_t>(x.dtype), static_cast<std::int64_t>(math), x.device.index()};
  for (const TensorView* t : {&x, &w, &y}) key.insert(key.end(), t->sizes, t->sizes + 4);
  key.insert(key.end(), a.ints, a.ints + 7);
  return key;
}

std::string shape_text(const TensorView& t) {
  return detail::str_cat("[", t.sizes[0], ", ", t.sizes[1], ", ", t.sizes[2], ", ", t.sizes[3], "]");
}

// One pass's algorithm with the workspace it asks for.
struct Choice {
  int algo;
  std::size_t workspace;
};

// What one pass of one geometry needs on every call: its descriptors and cuDNN's heuristic
// ranking of its algorithms. Made once per geometry (the device among it) for the whole process,
// since a training loop calls the same few convolutions over and over and the setup costs host
// time on every one of them; DataParallel's replica threads, new every step, find them too. Plans
// are never changed after they are made, so threads may read one at once.
struct ConvPlan {
  ConvDescriptors descriptors;
  std::vector<Choice> choices;
};

enum Pass : int { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

// `ask(descriptors, n, &returned, perf)` fills cuDNN's ranking for a new geometry.
template <typename T, typename Perf, typename Ask>
const ConvPlan& plan_for(Pass pass, const TensorView& x, const TensorView& w, const TensorView& y, const KernelArgs& a,
                         Ask&& ask) {
  static std::mutex mutex;
  // A std::map's elements stay where they are as it grows. Never destroyed, as the handle pool:
  // nothing of cuDNN's is called during the exit's static destruction.
  static auto& cache = *new std::map<GeometryKey, ConvPlan>();
  const GeometryKey key = geometry_key(pass, x, w, y, a, ConvTypes<T>::math());
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  ConvDescriptors d = ConvDescriptors::make<T>(x, w, y, a);
  std::vector<Perf> perf(16);
  int returned = 0;
  ask(d, static_cast<int>(perf.size()), &returned, perf.data());
  std::vector<Choice> choices;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[static_cast<std::size_t>(i)];
    if (p.status == CUDNN_STATUS_SUCCESS) choices.push_back({static_cast<int>(p.algo), p.memory});
  }
  HWARO_CHECK(!choices.empty(), "conv2d on CUDA: cuDNN offers no algorithm for this convolution (input ",
              shape_text(x), ", weight ", shape_text(w), ", output ", shape_text(y), ")");
  return cache.emplace(key, ConvPlan{std::move(d), std::move(choices)}).first->second;
}

// Runs `run(algo, workspace, bytes)` with the first ranked algorithm whose workspace can be
// allocated: a large workspace that does not fit falls to the next algorithm, as PyTorch's does.
template <typename Run> void with_workspace(const KernelArgs& args, const std::vector<Choice>& choices, Run&& run) {
  Allocator& allocator = detail::backend(DeviceType::CUDA).allocator(args[0].device.index());
  for (std::size_t i = 0; i < choices.size(); ++i) {
    DataPtr workspace;
    if (choices[i].workspace > 0) {
      try {
        workspace = allocator.allocate(choices[i].workspace);
      } catch (const OutOfMemoryError&) {
        if (i + 1 < choices.size()) continue;
        throw;
      }
    }
    // Freed right after the enqueue: blocks are reused in the order of this (the current) stream.
    run(choices[i].algo, workspace.get(), choices[i].workspace);
    return;
  }
}

// tensors: out [N, O, oh, ow], x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] (data null: none)
template <typename T> struct Conv2dForward {
  static void run(const KernelArgs& args) {
    const TensorView &y = args[0], &x = args[1], &w = args[2], &bias = args[3];
    if (y.numel() == 0) return;
    set_device_of(args);
    cudnnHandle_t handle = handle_for<Cudnn>(args);
    const ConvPlan& plan = plan_for<T, cudnnConvolutionFwdAlgoPerf_t>(
        kForward, x, w, y, args, [&](const ConvDescriptors& d, int n, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
          HWARO_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x(), d.w(), d.conv(), d.y(), n,
                                                                   returned, perf));
        });
    const ConvDescriptors& d = plan.descriptors;
    const typename ConvTypes<T>::Scale one = 1, zero = 0;
    with_workspace(args, plan.choices, [&](int algo, void* workspace, std::size_t bytes) {
      HWARO_CUDNN_CHECK(cudnnConvolutionForward(handle, &one, d.x(), x.data, d.w(), w.data, d.conv(),
                                                static_cast<cudnnConvolutionFwdAlgo_t>(algo), workspace, bytes, &zero,
                                                d.y(), y.data));
    });
    if (bias.data != nullptr) HWARO_CUDNN_CHECK(cudnnAddTensor(handle, &one, d.bias(), bias.data, &one, d.y(), y.data));
  }
};

// tensors: grad_x [N, C, H, W], grad_out [N, O, oh, ow], weight [O, C/groups, kh, kw]
template <typename T> struct Conv2dBackwardInput {
  static void run(const KernelArgs& args) {
    const TensorView &dx = args[0], &dy = args[1], &w = args[2];
    if (dx.numel() == 0) return;
    set_device_of(args);
    if (dy.numel() == 0) {  // an empty output: no window reads x, so its gradient is zero
      HWARO_CUDA_CHECK(cudaMemsetAsync(dx.data, 0, static_cast<std::size_t>(dx.numel()) * sizeof(T), stream_of(args)));
      return;
    }
    cudnnHandle_t handle = handle_for<Cudnn>(args);
    const ConvPlan& plan = plan_for<T, cudnnConvolutionBwdDataAlgoPerf_t>(
        kBackwardData, dx, w, dy, args,
        [&](const ConvDescriptors& d, int n, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
          HWARO_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, d.w(), d.y(), d.conv(), d.x(), n,
                                                                        returned, perf));
        });
    const ConvDescriptors& d = plan.descriptors;
    const typename ConvTypes<T>::Scale one = 1, zero = 0;
    with_workspace(args, plan.choices, [&](int algo, void* workspace, std::size_t bytes) {
      HWARO_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, &one, d.w(), w.data, d.y(), dy.data, d.conv(),
                                                     static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), workspace,
                                                     bytes, &zero, d.x(), dx.data));
    });
  }
};

// tensors: grad_weight [O, C/groups, kh, kw], grad_bias [O] (data null: none), x [N, C, H, W],
// grad_out [N, O, oh, ow]
template <typename T> struct Conv2dBackwardWeight {
  static void run(const KernelArgs& args) {
    const TensorView &dw = args[0], &dbias = args[1], &x = args[2], &dy = args[3];
    set_device_of(args);
    if (dy.numel() == 0) {  // an empty batch (or output): the gradients are empty sums
      cudaStream_t stream = stream_of(args);
      HWARO_CUDA_CHECK(cudaMemsetAsync(dw.data, 0, static_cast<std::size_t>(dw.numel()) * sizeof(T), stream));
      if (dbias.data != nullptr) {
        HWARO_CUDA_CHECK(cudaMemsetAsync(dbias.data, 0, static_cast<std::size_t>(dbias.numel()) * sizeof(T), stream));
      }
      return;
    }
    cudnnHandle_t handle = handle_for<Cudnn>(args);
    const ConvPlan& plan = plan_for<T, cudnnConvolutionBwdFilterAlgoPerf_t>(
        kBackwardFilter, x, dw, dy, args,
        [&](const ConvDescriptors& d, int n, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
          HWARO_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, d.x(), d.y(), d.conv(), d.w(), n,
                                                                          returned, perf));
        });
    const ConvDescriptors& d = plan.descriptors;
    const typename ConvTypes<T>::Scale one = 1, zero = 0;
    with_workspace(args, plan.choices, [&](int algo, void* workspace, std::size_t bytes) {
      HWARO_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, &one, d.x(), x.data, d.y(), dy.data, d.conv(),
                                                       static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), workspace,
                                                       bytes, &zero, d.w(), dw.data));
    });
    if (dbias.data != nullptr) {
      channel_sum(static_cast<const T*>(dy.data), static_cast<T*>(dbias.data), dy.sizes[0], dy.sizes[1],
                  dy.sizes[2] * dy.sizes[3], stream_of(args));
    }
  }
};

// HWARO_CUDNN=off leaves the convolutions to im2col + cuBLAS, as torch.backends.cudnn.enabled =
// False does in PyTorch: to compare the two paths, or to step around a cuDNN problem.
bool cudnn_switched_off() {
  const char* value = std::getenv("HWARO_CUDNN");
  return value != nullptr && (std::string(value) == "off" || std::string(value) == "0");
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  if (cudnn_switched_off()) return;
  table.set_types<Conv2dForward, float, double, Half, BFloat16>(OpId::Conv2d);
  table.set_types<Conv2dBackwardInput, float, double, Half, BFloat16>(OpId::Conv2dBackwardInput);
  table.set_types<Conv2dBackwardWeight, float, double, Half, BFloat16>(OpId::Conv2dBackwardWeight);
}

}  // namespace hwaro::cuda

#else

namespace hwaro::cuda {
// Built without cuDNN: no convolution kernels, so convolution takes the im2col + cuBLAS path.
void register_conv_kernels(KernelTable&) {}
}  // namespace hwaro::cuda

#endif
