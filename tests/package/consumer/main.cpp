// A user's program built against an installed hwaro: it must compile, link and compute.
#include <hwaro/hwaro.h>

#include <iostream>

namespace hw = hwaro;

int main() {
  const hw::Tensor a = hw::tensor({1.f, 2.f, 3.f});
  const float total = (a + a).sum().item<float>();
  if (total != 12.f) {
    std::cerr << "consumer: expected 12, got " << total << "\n";
    return 1;
  }
  std::cout << "consumer: hwaro " << hw::version() << " works (sum = " << total << ")\n";
  return 0;
}
