// Guide Dev Tip 2, "VRAM": watch what the caching allocator holds, give cached memory
// back, and recover from running out by retrying with a smaller batch.
//
//   PyTorch:  torch.cuda.memory_allocated(), memory_reserved(), empty_cache(),
//             memory_summary(), except torch.cuda.OutOfMemoryError
#include <hwaro/hwaro.h>

#include <cstdint>
#include <iostream>

namespace hw = hwaro;

namespace {

constexpr double kMiB = 1 << 20;

void report(const char* when) {
  std::cout << when << ": allocated " << hw::cuda::memory_allocated() / kMiB << " MiB, reserved "
            << hw::cuda::memory_reserved() / kMiB << " MiB\n";
}

// One "training step" whose memory grows with the batch size.
void step(std::int64_t batch, const hw::Device& device) {
  const hw::Tensor activations = hw::empty({batch, 1024, 1024}, {.device = device});  // 4 MiB per sample
  (void)(activations * 2.0);
}

}  // namespace

int main() {
  if (!hw::cuda::is_available()) {
    std::cout << "no GPU (" << hw::cuda::unavailable_reason() << "): there is no VRAM to watch.\n"
              << "The VRAM functions still answer (allocated " << hw::cuda::memory_allocated() << " bytes), so\n"
              << "device-agnostic code needs no special case.\n";
    return 0;
  }
  const hw::Device device("cuda:0");
  report("at start");
  {
    const hw::Tensor big = hw::empty({256, 1024, 1024}, {.device = device});  // 1 GiB
    report("with a 1 GiB tensor");
  }
  report("after freeing it (still reserved: the cache keeps it for reuse)");
  hw::cuda::empty_cache();
  report("after empty_cache()");

  // Out of memory is hw::OutOfMemoryError: catch it, free what you can, try a smaller batch.
  const std::int64_t total_mib = static_cast<std::int64_t>(hw::cuda::get_device_properties(0).total_memory / kMiB);
  std::int64_t batch = total_mib;  // deliberately too large: batch * 4 MiB * 2 exceeds the device
  while (batch > 0) {
    try {
      hw::cuda::reset_peak_memory_stats();  // so the peak below is this step's
      step(batch, device);
      std::cout << "batch " << batch << " fits; the step's peak was " << hw::cuda::max_memory_allocated() / kMiB
                << " MiB allocated\n";
      break;
    } catch (const hw::OutOfMemoryError& e) {
      std::cout << "batch " << batch << " is too large: " << e.what() << "\n";
      hw::cuda::empty_cache();
      batch /= 2;
    }
  }
  std::cout << hw::cuda::memory_summary();
  return 0;
}
