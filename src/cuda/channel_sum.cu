// channel_sum (channel_sum.h): one block per channel, its threads striding over the batch's
// positions, combined as the reductions combine (reduce_block.cuh), so the sum order is fixed
// and the result reproducible. cuDNN's cudnnConvolutionBackwardBias is not used for this: on an
// H200 with cuDNN 9.19 it returned CUDNN_STATUS_NOT_SUPPORTED for some of the dtypes hwaro
// convolves in, and PyTorch too computes the bias gradient as a plain sum.
#include "cuda/channel_sum.h"

#include "hwaro/half.h"
#include "cuda/kernel_launch.h"
#include "cuda/reduce_block.cuh"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace hwaro::cuda {
namespace {

// blockDim = (1, kReduceThreads): a single column in block_reduce_columns' terms.
template <typename T>
__global__ void channel_sum_kernel(const T* grad_out, T* out, std::int64_t batch, std::int64_t channels,
                                   std::int64_t positions) {
  using Acc = kernels::sum_acc_t<T>;
  const std::int64_t channel = blockIdx.x;
  Acc acc = 0;
  for (std::int64_t i = threadIdx.y; i < batch * positions; i += blockDim.y) {
    const std::int64_t image = i / positions, position = i - image * positions;
    acc += kernels::cast_value<Acc>(grad_out[(image * channels + channel) * positions + position]);
  }
  acc = block_reduce_columns<kernels::SumOp>(acc);
  if (threadIdx.y == 0) out[channel] = kernels::cast_value<T>(acc);
}

}  // namespace

template <typename T>
void channel_sum(const T* grad_out, T* out, std::int64_t batch, std::int64_t channels, std::int64_t positions,
                 cudaStream_t stream) {
  if (channels == 0) return;
  channel_sum_kernel<<<static_cast<unsigned>(channels), dim3(1, kReduceThreads), 0, stream>>>(grad_out, out, batch,
                                                                                              channels, positions);
  HWARO_CUDA_CHECK_LAUNCH();
}

template void channel_sum<float>(const float*, float*, std::int64_t, std::int64_t, std::int64_t, cudaStream_t);
template void channel_sum<double>(const double*, double*, std::int64_t, std::int64_t, std::int64_t, cudaStream_t);
template void channel_sum<Half>(const Half*, Half*, std::int64_t, std::int64_t, std::int64_t, cudaStream_t);
template void channel_sum<BFloat16>(const BFloat16*, BFloat16*, std::int64_t, std::int64_t, std::int64_t,
                                    cudaStream_t);

}  // namespace hwaro::cuda
