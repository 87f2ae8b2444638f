#pragma once
// HWARO_CUDA_CHECK(call): every CUDA runtime call is checked; a failure names
// the file, the line, the call and CUDA's own message.
#include <cuda_runtime_api.h>

#include "hwaro/errors.h"

#define HWARO_CUDA_CHECK(call)                                                                          \
  do {                                                                                                  \
    const cudaError_t hwaro_cuda_status = (call);                                                       \
    if (HWARO_UNLIKELY(hwaro_cuda_status != cudaSuccess)) {                                             \
      throw ::hwaro::Error(::hwaro::detail::str_cat("CUDA error at ", __FILE__, ":", __LINE__, ": ", #call, \
                                                    " failed: ", cudaGetErrorString(hwaro_cuda_status))); \
    }                                                                                                   \
  } while (false)
