#include "cuda/pinned_host_allocator.h"

#include "cuda/cuda_check.h"
#include "cuda/stream_state.h"

namespace hwaro::cuda {

// cudaHostAlloc (portable: pinned for every device) / cudaFreeHost; nullptr when it fails.
class PinnedHostAllocator::Backing final : public BackingAllocator {
 public:
  void* raw_alloc(std::size_t nbytes) override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, nbytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void raw_free(void* ptr) override { cudaFreeHost(ptr); }  // at exit the driver may be gone: ignore errors
};

// Events on any device's streams. record() does not throw: 0 means "wait instead".
class PinnedHostAllocator::Events final : public HostEvents {
 public:
  EventHandle record(int device, StreamId stream) override {
    cudaEvent_t event = nullptr;
    const bool ok = cudaSetDevice(device) == cudaSuccess &&
                    cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess &&
                    cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess;
    if (!ok) {
      cudaGetLastError();
      if (event != nullptr) cudaEventDestroy(event);
      event = nullptr;
    }
    cudaSetDevice(detail::thread_device());
    return reinterpret_cast<EventHandle>(event);
  }
  bool query(EventHandle event) override {
    return HWARO_CUDA_QUERY(cudaEventQuery(reinterpret_cast<cudaEvent_t>(event)));
  }
  void release(EventHandle event) override { cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event)); }
  void synchronize_stream(int device, StreamId stream) override {
    cudaSetDevice(device);
    cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
    cudaGetLastError();
    cudaSetDevice(detail::thread_device());
  }
};

PinnedHostAllocator::PinnedHostAllocator()
    : backing_(std::make_unique<Backing>()),
      events_(std::make_unique<Events>()),
      cache_(std::make_unique<HostBlockCache>(*backing_, *events_)) {}

PinnedHostAllocator::~PinnedHostAllocator() = default;

DataPtr PinnedHostAllocator::allocate(std::size_t nbytes) {
  void* p = cache_->allocate(nbytes);
  return DataPtr(p, cache_.get(), [](void* cache, void* data) { static_cast<HostBlockCache*>(cache)->free(data); },
                 Device(DeviceType::CPU));
}

void PinnedHostAllocator::record_event(const void* ptr, int device, cudaStream_t stream) {
  cache_->record_event(ptr, device, reinterpret_cast<StreamId>(stream));
}

}  // namespace hwaro::cuda
