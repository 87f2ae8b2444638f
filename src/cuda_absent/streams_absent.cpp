// hw::cuda's execution model in a build without CUDA: everything that needs a GPU
// throws the same clear error as a CUDA build on a machine without one.
#include "hwaro/cuda.h"
#include "hwaro/errors.h"

namespace hwaro::cuda {
namespace {
[[noreturn]] void no_gpu(const char* what) {
  throw Error(detail::str_cat(what, " needs a GPU, but none is available (", unavailable_reason(),
                              "); check hw::cuda::is_available() first or use the CPU"));
}
}  // namespace

void set_device(int) { no_gpu("hw::cuda::set_device()"); }
int current_device() { no_gpu("hw::cuda::current_device()"); }
DeviceGuard::DeviceGuard(int device) : previous_(-1) {
  if (device != -1) no_gpu("hw::cuda::DeviceGuard");
}
DeviceGuard::~DeviceGuard() = default;

void Stream::synchronize() const { no_gpu("hw::cuda::Stream::synchronize()"); }
bool Stream::query() const { no_gpu("hw::cuda::Stream::query()"); }
Stream new_stream(int, int) { no_gpu("hw::cuda::new_stream()"); }
Stream current_stream(int) { no_gpu("hw::cuda::current_stream()"); }
Stream default_stream(int) { no_gpu("hw::cuda::default_stream()"); }
StreamGuard::StreamGuard(const Stream& stream) : previous_(stream), previous_device_(-1) { no_gpu("hw::cuda::StreamGuard"); }
StreamGuard::~StreamGuard() = default;

// An event can only have been recorded with a GPU, so event_ is always nullptr here.
Event::~Event() = default;
Event::Event(Event&& other) noexcept : timing_(other.timing_) {}
Event& Event::operator=(Event&& other) noexcept {
  timing_ = other.timing_;
  return *this;
}
void Event::record() { no_gpu("hw::cuda::Event::record()"); }
void Event::record(const Stream&) { no_gpu("hw::cuda::Event::record()"); }
bool Event::query() const { return true; }
void Event::synchronize() const {}
void Event::wait(const Stream&) const { no_gpu("hw::cuda::Event::wait()"); }
void Event::wait() const { no_gpu("hw::cuda::Event::wait()"); }
float Event::elapsed_time(const Event&) const {
  throw Error("Event::elapsed_time(): both events must be recorded first (call record() on each); "
              "recording needs a GPU, and none is available (" + unavailable_reason() + ")");
}

void synchronize(int) { no_gpu("hw::cuda::synchronize()"); }
void record_stream(const Tensor&, const Stream&) { no_gpu("hw::cuda::record_stream()"); }

}  // namespace hwaro::cuda
