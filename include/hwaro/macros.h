#pragma once
// Portability macros shared by host and device code.

#if defined(__CUDACC__)
#define HWARO_HOST_DEVICE __host__ __device__
#else
#define HWARO_HOST_DEVICE
#endif

#define HWARO_LIKELY(x) __builtin_expect(!!(x), 1)
#define HWARO_UNLIKELY(x) __builtin_expect(!!(x), 0)
