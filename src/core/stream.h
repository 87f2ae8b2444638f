#pragma once
// Stream: an ordered queue of work on one device. The CPU's runs work at once;
// CUDA's wraps a cudaStream_t.
#include "hwaro/device.h"

namespace hwaro {

class Stream {
 public:
  virtual ~Stream() = default;
  virtual Device device() const = 0;
  // Blocks until all work queued on this stream has finished.
  virtual void synchronize() = 0;
  // Backend-specific handle (cudaStream_t for CUDA); nullptr where there is none.
  virtual void* native_handle() const { return nullptr; }
};

}  // namespace hwaro
