#pragma once
// The calling thread's library handle (cuBLAS, cuDNN) for an op's device, set to the op's stream.
// Handles come from one process-wide pool per library (core/handle_pool.h): a thread holds one per
// device while it lives and gives it back when it ends, for the next thread to use.
#include <cuda_runtime_api.h>

#include "core/handle_pool.h"
#include "core/kernel_args.h"
#include "cuda/kernel_launch.h"

namespace hwaro::cuda {

// `Library` is HandlePool's, with set_stream(Handle, cudaStream_t) besides (checking its call).
// The op's device is current (set_device_of) when a handle is first made for it.
template <typename Library> typename Library::Handle handle_for(const KernelArgs& args) {
  // Never destroyed: at exit the libraries' own state may be gone before a static pool's
  // destructor would run, and destroying a handle then can crash; the driver reclaims them.
  static auto* const pool = new HandlePool<Library>();
  thread_local ThreadHandleLease<Library> lease(*pool);
  const typename Library::Handle h = lease.get(args[0].device.index());
  Library::set_stream(h, stream_of(args));
  return h;
}

}  // namespace hwaro::cuda
