#pragma once
// hw::Timer: a host (wall-clock) timer that synchronises the devices it measures before
// reading the clock, so timing GPU work is right without remembering synchronize()
// (guide §4.2). GPU ops return as soon as their kernels are queued; a plain clock around
// them measures the queueing, not the work.
//
//   hw::Timer timer(hw::Device("cuda"));
//   timer.start();  y = model(x);  double ms = timer.stop();
//
// On the CPU there is nothing to wait for and the timer is a plain steady clock.
#include <chrono>
#include <vector>

#include "hwaro/device.h"

namespace hwaro {

class Timer {
 public:
  // Synchronises every available accelerator device (none on a CPU-only machine).
  Timer();
  // Synchronises these devices; a device that does not exist is a clear hw::Error here.
  explicit Timer(Device device);
  explicit Timer(std::vector<Device> devices);

  // Waits for work already queued on the devices, then starts the clock.
  void start();
  // Waits for the devices, stops the clock and returns elapsed_ms().
  double stop();
  // Milliseconds between the last start() and stop(); an error before both were called.
  double elapsed_ms() const;
  const std::vector<Device>& devices() const { return devices_; }

 private:
  void synchronize_devices() const;

  std::vector<Device> devices_;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point stop_{};
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace hwaro
