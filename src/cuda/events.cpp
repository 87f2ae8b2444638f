// hw::cuda::Event: cudaEvent_t created on first record(), on the device of that stream.
#include <utility>

#include "cuda/cuda_check.h"
#include "cuda/stream_state.h"
#include "hwaro/cuda.h"

namespace hwaro::cuda {
namespace {
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(as_event(event_));
}

Event::Event(Event&& other) noexcept
    : timing_(other.timing_), device_(std::exchange(other.device_, -1)), event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) cudaEventDestroy(as_event(event_));
    timing_ = other.timing_;
    device_ = std::exchange(other.device_, -1);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record() { record(current_stream()); }

void Event::record(const Stream& stream) {
  detail::require_gpu("hw::cuda::Event::record()");
  HWARO_CHECK(event_ == nullptr || device_ == stream.device(), "Event::record(): this event was recorded on cuda:",
              device_, " and cannot be recorded on a stream of cuda:", stream.device(), "; use one event per device");
  const detail::ScopedDevice on(stream.device());
  if (event_ == nullptr) {
    cudaEvent_t e = nullptr;
    HWARO_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming));
    event_ = e;
    device_ = stream.device();
  }
  HWARO_CUDA_CHECK(cudaEventRecord(as_event(event_), static_cast<cudaStream_t>(stream.native_handle())));
}

bool Event::query() const {
  if (event_ == nullptr) return true;
  return HWARO_CUDA_QUERY(cudaEventQuery(as_event(event_)));
}

void Event::synchronize() const {
  if (event_ != nullptr) HWARO_CUDA_CHECK(cudaEventSynchronize(as_event(event_)));
}

void Event::wait(const Stream& stream) const {
  detail::require_gpu("hw::cuda::Event::wait()");
  if (event_ == nullptr) return;  // nothing to wait for, as in PyTorch
  const detail::ScopedDevice on(stream.device());
  HWARO_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream.native_handle()), as_event(event_), 0));
}

void Event::wait() const { wait(current_stream()); }

float Event::elapsed_time(const Event& end) const {
  HWARO_CHECK(timing_ && end.timing_, "Event::elapsed_time(): both events need enable_timing=true; create them as ",
              "hw::cuda::Event(true)");
  HWARO_CHECK(event_ != nullptr && end.event_ != nullptr, "Event::elapsed_time(): both events must be recorded first ",
              "(call record() on each)");
  HWARO_CHECK(device_ == end.device_, "Event::elapsed_time(): the events were recorded on different GPUs (cuda:",
              device_, " and cuda:", end.device_, "); time work on one GPU with events recorded on it");
  // As PyTorch: refused, not CUDA's "device not ready", while the GPU has not passed both.
  HWARO_CHECK(query() && end.query(), "Event::elapsed_time(): both events must be completed first; call ",
              "synchronize() on the later one");
  const detail::ScopedDevice on(device_);
  float ms = 0;
  HWARO_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(event_), as_event(end.event_)));
  return ms;
}

}  // namespace hwaro::cuda
