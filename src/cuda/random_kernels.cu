// Placeholder until this family's CUDA kernels land: registers nothing, so its ops
// report "kernel not implemented on cuda".
#include "cuda/kernel_families.h"

namespace hwaro::cuda {
void register_random_kernels(KernelTable&) {}
}  // namespace hwaro::cuda
