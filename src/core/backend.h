#pragma once
// Backend: what one device type provides. One instance per DeviceType,
// registered into core's registry at start-up (see backend_registry.h).
#include "core/allocator.h"
#include "core/kernel_args.h"
#include "core/op_id.h"
#include "core/stream.h"
#include "core/tensor_view.h"

namespace hwaro {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceType type() const = 0;
  virtual int device_count() const = 0;  // 0 is a valid answer
  // Why device_count() is 0, for error messages ("no NVIDIA driver found"); empty otherwise.
  virtual std::string unavailable_reason() const { return {}; }
  virtual int current_device() const { return 0; }
  virtual Allocator& allocator(int index) = 0;
  // Page-locked host memory for fast copies to this device; nullptr where the backend has none.
  virtual Allocator* pinned_host_allocator() { return nullptr; }
  virtual Stream& current_stream(int index) = 0;
  // Copies src into dst (same shape; dtypes and strides may differ). Called on the backend of
  // the non-CPU side for host<->device copies.
  virtual void copy(const TensorView& src, const TensorView& dst, Stream& stream) = 0;
  virtual void synchronize(int index) = 0;
  // nullptr: the op is not supported for this dtype here; the caller raises a clear error.
  virtual KernelFn kernel(OpId op, DType dtype) const = 0;

  // Several streams per device (CUDA). A stream is named by its native handle (nullptr: the
  // default stream), as current_stream(index).native_handle() gives it. Autograd runs each
  // backward node on the stream its forward ran on with these; single-stream backends keep the
  // defaults, which have nothing to do.
  // Makes `stream` this thread's current stream of device `index`.
  virtual void set_current_stream(int /*index*/, void* /*stream*/) {}
  // Work queued on `waiter` from now on waits for the work queued on `producer` until now.
  virtual void wait_stream(int /*index*/, void* /*waiter*/, void* /*producer*/) {}
  // The allocation that starts at `base` is used on `stream` too: once freed, it is reused only
  // after the work queued on `stream` until now (hw::cuda::record_stream).
  virtual void record_stream(int /*index*/, const void* /*base*/, void* /*stream*/) {}
};

}  // namespace hwaro
