// Guide §3.1: moving tensors. x.to(device) returns a NEW tensor and leaves x where it was
// (so the result must be assigned); a tensor already on the device comes back without a copy.
// Dev Tip 1: computing with tensors on two devices is caught before the op runs.
#include <hwaro/hwaro.h>

#include <iostream>

namespace hw = hwaro;

int main() {
  const hw::Device device = hw::default_device();
  std::cout << "device: " << device << "\n";

  hw::Tensor x = hw::randn({2, 3});  // created on the CPU, float32, like torch.randn
  std::cout << "x = " << x << "\n";

  hw::Tensor y = x.to(device);  // a new tensor on `device`; x is untouched
  std::cout << "x is on " << x.device() << ", y is on " << y.device() << "\n";
  std::cout << "y shares x's storage: " << (y.is_alias_of(x) ? "yes (already on that device, no copy)" : "no (copied)")
            << "\n";

  // Compute on the device, then bring a result back to the CPU to read it.
  hw::Tensor w = hw::randn({3, 4}).to(device);
  hw::Tensor z = hw::matmul(y, w).relu();
  std::cout << "relu(y @ w) has shape " << z.sizes() << " and sum " << z.sum().item<float>() << "\n";

  // Dev Tip 1. The same-device error, caught before anything runs. On a machine without a GPU the
  // CPU-only build cannot put a tensor elsewhere, so asking for CUDA shows the other clear error.
  try {
    hw::Tensor on_gpu = x.to("cuda");
    hw::Tensor on_cpu = hw::ones({2, 3});
    hw::Tensor bad = on_gpu + on_cpu;  // throws hw::DeviceMismatchError
  } catch (const hw::DeviceMismatchError& e) {
    std::cout << "device mismatch: " << e.what() << "\n";
  } catch (const hw::Error& e) {
    std::cout << "x.to(\"cuda\"): " << e.what() << "\n";
  }
  return 0;
}
