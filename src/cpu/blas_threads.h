#pragma once
// OpenBLAS's own thread count follows hw::set_num_threads.
namespace hwaro::cpu {
void set_blas_threads(int n);
// openblas_get_corename(): the kernel family OpenBLAS picked ("Haswell").
const char* blas_core_name();
// "OpenBLAS 0.3.21 ..." as the library reports itself.
const char* blas_config();
}  // namespace hwaro::cpu
