// The one place that names each built-in backend (see core/backend_registry.h).
#include "autograd/install.h"
#include "core/backend_registry.h"
#include "cpu/cpu_backend.h"
#ifdef HWARO_WITH_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace hwaro::detail {

void register_builtin_backends() {
  // Autograd's recorder is connected here too: every tensor is made through a backend, so it
  // is in place before the first op can record.
  autograd::install();
  cpu::register_cpu_backend();
#ifdef HWARO_WITH_CUDA
  cuda::register_cuda_backend();
#endif
}

}  // namespace hwaro::detail
