// hw::cuda's devices and streams: set_device, DeviceGuard, Stream, the stream pool,
// StreamGuard and synchronize(). Per-thread state lives in stream_state.cpp.
#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/stream_state.h"
#include "hwaro/cuda.h"

namespace hwaro::cuda {
namespace {

// Streams are handed out round-robin from a fixed pool per device and priority, as
// PyTorch does, so new_stream() in a loop does not exhaust the driver; they are never destroyed.
constexpr std::size_t kPoolSize = 32;

struct StreamPool {
  std::once_flag created;
  std::array<cudaStream_t, kPoolSize> streams{};
  std::atomic<std::size_t> next{0};
};

StreamPool& pool_for(int device, bool high_priority) {
  static std::vector<std::array<StreamPool, 2>> pools(static_cast<std::size_t>(device_count()));
  StreamPool& pool = pools.at(static_cast<std::size_t>(device))[high_priority ? 1 : 0];
  std::call_once(pool.created, [&] {
    const int previous = ::hwaro::cuda::detail::thread_device();
    HWARO_CUDA_CHECK(cudaSetDevice(device));
    int least = 0;
    int greatest = 0;  // the numerically smallest value is the highest priority
    HWARO_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (cudaStream_t& s : pool.streams) {
      HWARO_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high_priority ? greatest : least));
    }
    HWARO_CUDA_CHECK(cudaSetDevice(previous));
  });
  return pool;
}

}  // namespace

void set_device(int device) {
  detail::set_thread_device(detail::resolve_device(device, "hw::cuda::set_device()"));
}

int current_device() { return detail::resolve_device(-1, "hw::cuda::current_device()"); }

DeviceGuard::DeviceGuard(int device) : previous_(-1) {
  if (device == -1) return;
  previous_ = current_device();
  set_device(device);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ != -1) detail::restore_thread_device(previous_);
}

void Stream::synchronize() const {
  detail::require_gpu("hw::cuda::Stream::synchronize()");
  const detail::ScopedDevice on(device_);
  HWARO_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)));
}

bool Stream::query() const {
  detail::require_gpu("hw::cuda::Stream::query()");
  const detail::ScopedDevice on(device_);  // a null handle is the current device's default stream
  return HWARO_CUDA_QUERY(cudaStreamQuery(static_cast<cudaStream_t>(handle_)));
}

Stream new_stream(int device, int priority) {
  const int index = detail::resolve_device(device, "hw::cuda::new_stream()");
  StreamPool& pool = pool_for(index, priority < 0);
  return Stream(index, pool.streams[pool.next.fetch_add(1) % kPoolSize]);
}

Stream current_stream(int device) {
  const int index = detail::resolve_device(device, "hw::cuda::current_stream()");
  return Stream(index, detail::current_handle(index));
}

Stream default_stream(int device) {
  return Stream(detail::resolve_device(device, "hw::cuda::default_stream()"), nullptr);
}

StreamGuard::StreamGuard(const Stream& stream)
    : previous_(current_stream(stream.device())), previous_device_(detail::thread_device()) {
  detail::set_thread_device(stream.device());
  detail::set_current_handle(stream.device(), static_cast<cudaStream_t>(stream.native_handle()));
}

StreamGuard::~StreamGuard() {
  detail::set_current_handle(previous_.device(), static_cast<cudaStream_t>(previous_.native_handle()));
  detail::restore_thread_device(previous_device_);
}

void synchronize(int device) {
  const int index = detail::resolve_device(device, "hw::cuda::synchronize()");
  HWARO_CUDA_CHECK(cudaSetDevice(index));
  HWARO_CUDA_CHECK(cudaDeviceSynchronize());
  HWARO_CUDA_CHECK(cudaSetDevice(detail::thread_device()));
}

}  // namespace hwaro::cuda
