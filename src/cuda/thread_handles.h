#pragma once
// One library handle (cuBLAS, cuDNN) per device and thread: a handle must not be used by two
// threads at once. Each is made on first use on its device and destroyed when the thread ends.
// `Library` says how: a struct with Handle, kName and static create(Handle*), destroy(Handle)
// and set_stream(Handle, cudaStream_t), the first and last checking their call.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>

#include "core/kernel_args.h"
#include "cuda/kernel_launch.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {

template <typename Library> class ThreadHandles {
 public:
  using Handle = typename Library::Handle;
  static constexpr int kMaxDevices = 64;

  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles&) = delete;
  ThreadHandles& operator=(const ThreadHandles&) = delete;
  ~ThreadHandles() {
    for (Handle h : handles_) {
      if (h != nullptr) Library::destroy(h);  // at thread exit: nothing useful to do with a failure
    }
  }

  // The handle of `device`, set to run on `stream`.
  Handle get(int device, cudaStream_t stream) {
    HWARO_CHECK(device >= 0 && device < kMaxDevices, Library::kName, " handles: device index ", device,
                " is beyond ", kMaxDevices);
    Handle& h = handles_[static_cast<std::size_t>(device)];
    if (h == nullptr) Library::create(&h);
    Library::set_stream(h, stream);
    return h;
  }

 private:
  std::array<Handle, kMaxDevices> handles_{};
};

// The calling thread's handle for the device and stream of an op's output.
template <typename Library> typename Library::Handle handle_for(const KernelArgs& args) {
  thread_local ThreadHandles<Library> handles;
  return handles.get(args[0].device.index(), stream_of(args));
}

}  // namespace hwaro::cuda
