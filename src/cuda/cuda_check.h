#pragma once
// HWARO_CUDA_CHECK(call): every CUDA runtime call is checked; a failure names
// the file, the line, the call and CUDA's own message. A failure that is not sticky is also
// cleared from the runtime's last error, as PyTorch's C10_CUDA_CHECK does, so that the next
// launch check (cudaGetLastError) does not report it again against an unrelated kernel.
#include <cuda_runtime_api.h>

#include "hwaro/errors.h"

#define HWARO_CUDA_CHECK(call)                                                                          \
  do {                                                                                                  \
    const cudaError_t hwaro_cuda_status = (call);                                                       \
    if (HWARO_UNLIKELY(hwaro_cuda_status != cudaSuccess)) {                                             \
      cudaGetLastError();                                                                               \
      throw ::hwaro::Error(::hwaro::detail::str_cat("CUDA error at ", __FILE__, ":", __LINE__, ": ", #call, \
                                                    " failed: ", cudaGetErrorString(hwaro_cuda_status))); \
    }                                                                                                   \
  } while (false)

// The answer of cudaEventQuery / cudaStreamQuery: true when the work is done, false while it is
// still pending (cudaErrorNotReady, which is cleared: it is not an error); any other status throws
// as HWARO_CUDA_CHECK does.
#define HWARO_CUDA_QUERY(call) ::hwaro::cuda_detail::query_result((call), #call, __FILE__, __LINE__)

namespace hwaro::cuda_detail {
inline bool query_result(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  if (HWARO_UNLIKELY(status != cudaSuccess)) {
    throw ::hwaro::Error(::hwaro::detail::str_cat("CUDA error at ", file, ":", line, ": ", call,
                                                  " failed: ", cudaGetErrorString(status)));
  }
  return true;
}
}  // namespace hwaro::cuda_detail
