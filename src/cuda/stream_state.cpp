#include "cuda/stream_state.h"

#include <vector>

#include "cuda/cuda_check.h"
#include "hwaro/cuda.h"

namespace hwaro::cuda::detail {
namespace {

// hwaro::Stream over whatever handle this thread has made current for one device.
class ThreadStream final : public hwaro::Stream {
 public:
  explicit ThreadStream(int device) : device_(device) {}
  Device device() const override { return Device(DeviceType::CUDA, device_); }
  void synchronize() override;
  void* native_handle() const override { return handle_; }
  void set(cudaStream_t handle) { handle_ = handle; }

 private:
  int device_;
  cudaStream_t handle_ = nullptr;
};

struct ThreadState {
  int device = 0;
  std::vector<ThreadStream> streams;  // one per device, sized once per thread
  ThreadState() {
    for (int i = 0; i < device_count(); ++i) streams.emplace_back(i);
  }
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

void ThreadStream::synchronize() {
  const ScopedDevice on(device_);
  HWARO_CUDA_CHECK(cudaStreamSynchronize(handle_));
}

}  // namespace

void require_gpu(const char* what) {
  HWARO_CHECK(is_available(), what, " needs a GPU, but none is available (", unavailable_reason(),
              "); check hw::cuda::is_available() first or use the CPU");
}

int resolve_device(int device, const char* what) {
  require_gpu(what);
  if (device == -1) return state().device;
  HWARO_CHECK_AS(IndexError, device >= 0 && device < device_count(), what, ": CUDA device ", device,
                 " does not exist; ", device_count(), " device(s) are visible (use -1 for the current one)");
  return device;
}

int thread_device() { return state().device; }

void set_thread_device(int device) {
  HWARO_CUDA_CHECK(cudaSetDevice(device));
  state().device = device;
}

void restore_thread_device(int device) noexcept {
  cudaSetDevice(device);
  state().device = device;
}

ScopedDevice::ScopedDevice(int device) {
  HWARO_CUDA_CHECK(cudaGetDevice(&previous_));
  HWARO_CUDA_CHECK(cudaSetDevice(device));
}

ScopedDevice::~ScopedDevice() { cudaSetDevice(previous_); }

cudaStream_t current_handle(int device) {
  return static_cast<cudaStream_t>(state().streams.at(static_cast<std::size_t>(device)).native_handle());
}

void set_current_handle(int device, cudaStream_t stream) { state().streams.at(static_cast<std::size_t>(device)).set(stream); }

hwaro::Stream& current_stream_object(int device) { return state().streams.at(static_cast<std::size_t>(device)); }

}  // namespace hwaro::cuda::detail
