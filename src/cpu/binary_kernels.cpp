#include "cpu/kernel_families.h"

namespace hwaro::cpu {
void register_binary_kernels(KernelTable& /*table*/) {}
}  // namespace hwaro::cpu
