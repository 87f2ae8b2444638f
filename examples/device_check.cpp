// Guide §2, "Device Check": is a GPU there, how many, what are they, and the
// device-agnostic pattern that picks CUDA when it is available and the CPU otherwise.
//
//   PyTorch:  torch.cuda.is_available(), torch.cuda.get_device_name(0),
//             torch.cuda.device_count(), torch.device("cuda" if ... else "cpu")
#include <hwaro/hwaro.h>

#include <iostream>

namespace hw = hwaro;

int main() {
  // 1. Is CUDA usable, and what hardware is there?
  if (hw::cuda::is_available()) {
    std::cout << "GPU available: " << hw::cuda::get_device_name(0) << "\n";
    std::cout << "device count: " << hw::cuda::device_count() << "\n";
    for (int i = 0; i < hw::cuda::device_count(); ++i) {
      const hw::cuda::DeviceProperties p = hw::cuda::get_device_properties(i);
      std::cout << "  cuda:" << i << " " << p.name << ", " << p.total_memory / (1 << 20) << " MiB, "
                << p.multi_processor_count << " multiprocessors, compute capability " << p.major << "." << p.minor
                << "\n";
    }
  } else {
    // Never a crash: without a GPU, a driver or a CUDA build, the answer is simply "no", with the reason.
    std::cout << "no GPU found (" << hw::cuda::unavailable_reason() << ")\n";
  }

  // 2. The standard pattern: one program that runs wherever it is started.
  const hw::Device device = hw::default_device();  // cuda if available, else cpu (HWARO_DEVICE overrides)
  std::cout << "using device: " << device << "\n";

  // A device string that is not one is a clear error, not a crash.
  try {
    hw::Device bad("gpu");
  } catch (const hw::Error& e) {
    std::cout << "hw::Device(\"gpu\") -> " << e.what() << "\n";
  }
  return 0;
}
