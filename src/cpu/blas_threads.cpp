#include "cpu/blas_threads.h"

#include <cblas.h>

namespace hwaro::cpu {
void set_blas_threads(int n) { openblas_set_num_threads(n); }
const char* blas_core_name() { return openblas_get_corename(); }
const char* blas_config() { return openblas_get_config(); }
}  // namespace hwaro::cpu
