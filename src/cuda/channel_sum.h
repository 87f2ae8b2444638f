#pragma once
// The bias gradient of a CUDA convolution: grad_out [N, C, S] (contiguous) summed over the batch
// and the S positions into [C]. conv_kernels.cpp (compiled by the host compiler) calls it; the
// kernel lives in channel_sum.cu.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace hwaro::cuda {

// Float accumulation for float, Half and BFloat16, double for double; enqueued on `stream`.
template <typename T>
void channel_sum(const T* grad_out, T* out, std::int64_t batch, std::int64_t channels, std::int64_t positions,
                 cudaStream_t stream);

}  // namespace hwaro::cuda
