#include "cuda/caching_device_allocator.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <cstring>

#include "cuda/cuda_check.h"
#include "cuda/stream_state.h"

namespace hwaro::cuda {

bool native_allocation_requested() {
  const char* mode = std::getenv("HWARO_CUDA_ALLOC");
  return mode != nullptr && std::strcmp(mode, "native") == 0;
}

// cudaMalloc / cudaFree on one device; nullptr when the driver has no memory left.
class CachingDeviceAllocator::CudaBacking final : public BackingAllocator {
 public:
  explicit CudaBacking(int device) : device_(device) {}
  void* raw_alloc(std::size_t nbytes) override {
    const detail::ScopedDevice on(device_);
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, nbytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // an out-of-memory failure is not sticky; clear it for the retry
      return nullptr;
    }
    // Any other failure (a sticky error from an earlier kernel, say) is that error, not a full GPU.
    HWARO_CUDA_CHECK(status);
    return p;
  }
  // Never throws: it runs from destructors (a tensor's, the cache's at exit). After a sticky error,
  // or once the runtime is unloading at exit, every call fails, and the memory goes with the context.
  void raw_free(void* ptr) override {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(device_) != cudaSuccess) return;
    cudaFree(ptr);
    cudaSetDevice(previous);
  }

 private:
  int device_;
};

// Events that tell the cache when a stream has passed the last use of a freed block.
class CachingDeviceAllocator::CudaEvents final : public StreamSync {
 public:
  explicit CudaEvents(int device) : device_(device) {}
  EventHandle record(StreamId stream) override {
    const detail::ScopedDevice on(device_);
    cudaEvent_t event = nullptr;
    HWARO_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    HWARO_CUDA_CHECK(cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)));
    return reinterpret_cast<EventHandle>(event);
  }
  bool query(EventHandle event) override {
    return HWARO_CUDA_QUERY(cudaEventQuery(reinterpret_cast<cudaEvent_t>(event)));
  }
  void synchronize(EventHandle event) override {
    HWARO_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(event)));
  }
  // Never throws, as raw_free: the cache's destructor releases its pending events.
  void release(EventHandle event) override { cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event)); }

 private:
  int device_;
};

CachingDeviceAllocator::CachingDeviceAllocator(int device)
    : device_(device),
      native_(native_allocation_requested()),
      backing_(std::make_unique<CudaBacking>(device)),
      events_(std::make_unique<CudaEvents>(device)) {
  if (!native_) {
    cache_ = std::make_unique<BlockCache>(Device(DeviceType::CUDA, device).str(), *backing_, *events_);
  }
}

CachingDeviceAllocator::~CachingDeviceAllocator() = default;

DataPtr CachingDeviceAllocator::allocate(std::size_t nbytes) {
  const Device device(DeviceType::CUDA, device_);
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device);
  if (native_) {
    void* p = backing_->raw_alloc(nbytes);
    HWARO_CHECK_AS(OutOfMemoryError, p != nullptr, "CUDA out of memory on ", device, ": tried to allocate ", nbytes,
                   " bytes with HWARO_CUDA_ALLOC=native (no cache); use a smaller batch size");
    return DataPtr(p, backing_.get(), [](void* backing, void* data) { static_cast<CudaBacking*>(backing)->raw_free(data); },
                   device);
  }
  // Blocks belong to the stream they are allocated on: this thread's current stream of the device.
  void* p = cache_->allocate(nbytes, reinterpret_cast<StreamId>(detail::current_handle(device_)));
  return DataPtr(p, cache_.get(), free_cached, device);
}

// A tensor's destructor frees through here, so nothing may escape: a free that must record an event
// (a block used on another stream) fails only when the GPU's context is already broken by an earlier
// error, which is reported where it happened. A warning, as PyTorch's, instead of std::terminate.
void CachingDeviceAllocator::free_cached(void* cache, void* data) noexcept {
  try {
    static_cast<BlockCache*>(cache)->free(data);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hwaro: warning: a CUDA block could not be freed (it stays allocated): %s\n", e.what());
  }
}

}  // namespace hwaro::cuda
