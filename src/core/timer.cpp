#include "hwaro/timer.h"

#include <utility>

#include "core/backend_registry.h"
#include "hwaro/errors.h"

namespace hwaro {

Timer::Timer() {
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    const auto type = static_cast<DeviceType>(t);
    if (type == DeviceType::CPU) continue;
    Backend* backend = detail::find_backend(type);
    const int count = backend == nullptr ? 0 : backend->device_count();
    for (int i = 0; i < count; ++i) devices_.emplace_back(type, i);
  }
}

Timer::Timer(Device device) : Timer(std::vector<Device>{device}) {}

Timer::Timer(std::vector<Device> devices) {
  // Resolving checks each device now ("no cuda device is available ..."), not at the first stop().
  for (const Device& d : devices) {
    if (!d.is_cpu()) devices_.push_back(detail::resolve(d));
  }
}

void Timer::synchronize_devices() const {
  for (const Device& d : devices_) {
    int index = 0;
    detail::backend_for(d, &index).synchronize(index);
  }
}

void Timer::start() {
  synchronize_devices();
  stopped_ = false;
  started_ = true;
  start_ = std::chrono::steady_clock::now();
}

double Timer::stop() {
  HWARO_CHECK(started_, "Timer::stop() was called before start(); call start() first");
  synchronize_devices();
  stop_ = std::chrono::steady_clock::now();
  stopped_ = true;
  return elapsed_ms();
}

double Timer::elapsed_ms() const {
  HWARO_CHECK(started_ && stopped_, "Timer::elapsed_ms(): the timer has ", started_ ? "not been stopped" : "not been started",
              "; call start() and then stop()");
  return std::chrono::duration<double, std::milli>(stop_ - start_).count();
}

}  // namespace hwaro
