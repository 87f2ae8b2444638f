// Guide §4.2, "Synchronisation": GPU work is asynchronous. An op returns as soon as its
// kernel is queued, so a host clock read right after it measures the queueing, not the
// work. Time GPU work with a pair of CUDA events, or with hw::Timer, which synchronises
// the devices it measures before reading the clock.
//
//   PyTorch:  torch.cuda.synchronize(), torch.cuda.Event(enable_timing=True),
//             start.record(); ...; end.record(); end.synchronize(); start.elapsed_time(end)
#include <hwaro/hwaro.h>

#include <chrono>
#include <iostream>

namespace hw = hwaro;

namespace {

// Enough work that the difference shows: a few large elementwise ops.
hw::Tensor work(const hw::Tensor& x) {
  hw::Tensor y = x;
  for (int i = 0; i < 50; ++i) y = y * 1.0001 + 0.5;
  return y;
}

}  // namespace

int main() {
  const hw::Device device = hw::default_device();
  std::cout << "using device: " << device << "\n";
  const hw::Tensor x = hw::randn({1 << 22}, {.device = device});
  (void)work(x);  // warm-up: the first call pays for allocation and kernel loading

  if (!device.is_cuda()) {
    std::cout << "no GPU (" << hw::cuda::unavailable_reason() << "): CPU ops finish before they return,\n"
              << "so a plain clock is already right here; on a GPU it would not be.\n";
  }

  // WRONG on a GPU: the clock stops while the kernels are still queued.
  const auto t0 = std::chrono::steady_clock::now();
  (void)work(x);
  const auto t1 = std::chrono::steady_clock::now();
  const double wrong_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  std::cout << "wrong (no synchronisation): " << wrong_ms << " ms\n";

  // RIGHT: hw::Timer synchronises the device at start() and stop().
  hw::Timer timer(device);
  timer.start();
  (void)work(x);
  const double right_ms = timer.stop();
  std::cout << "right (hw::Timer):          " << right_ms << " ms\n";
  std::cout << "the unsynchronised clock reported " << 100 * wrong_ms / right_ms << "% of the real time"
            << (device.is_cuda() ? ": it timed the queueing of the kernels, not their work\n"
                                 : " (on the CPU both ways time the work; they differ only by noise)\n");

  // RIGHT, on the GPU itself: CUDA events mark the stream; elapsed_time reads the GPU's clock.
  if (device.is_cuda()) {
    hw::cuda::DeviceGuard on(device.index());  // record() marks the current device's stream: make it the one timed
    hw::cuda::Event start(/*enable_timing=*/true);
    hw::cuda::Event stop(true);
    start.record();
    (void)work(x);
    stop.record();
    stop.synchronize();  // wait until the GPU has passed `stop`
    std::cout << "right (CUDA events):        " << start.elapsed_time(stop) << " ms\n";
    hw::cuda::synchronize();  // the blunt tool: wait for all work on the current device
  }
  return 0;
}
