#pragma once
// The per-thread half of the CUDA execution model: each thread's current device and
// the current stream of each device (nullptr: the default stream). Ops enqueue on
// current_stream_object(device), which StreamGuard redirects.
#include <cuda_runtime_api.h>

#include "core/stream.h"

namespace hwaro::cuda::detail {

// Throws hw::Error "<what> needs a GPU, but none is available (<reason>) ..." without one.
void require_gpu(const char* what);
// -1 -> this thread's current device; otherwise checks that the device exists.
int resolve_device(int device, const char* what);

int thread_device();
void set_thread_device(int device);  // also cudaSetDevice
// For destructors: the same without throwing (the device was valid when it was saved).
void restore_thread_device(int device) noexcept;

// Makes `device` current for a scope (an allocation, an event, a wait on another GPU's stream),
// then the device that was current before again, also when the scope throws, so that no later raw
// CUDA call or library handle of the thread runs on the wrong GPU. The one before is not always the
// thread's own: a kernel wrapper makes its output's device current (set_device_of) and may then
// allocate a workspace, after which its launches must still go to that device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

cudaStream_t current_handle(int device);
void set_current_handle(int device, cudaStream_t stream);
// The backend's view of this thread's current stream of `device` (valid on this thread only).
hwaro::Stream& current_stream_object(int device);

}  // namespace hwaro::cuda::detail
