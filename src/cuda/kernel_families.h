#pragma once
// One registration function per CUDA kernel family; each lives in the .cu (or, for
// cuBLAS, .cpp) file of its family. CudaBackend calls all of them once at start-up.
#include "core/kernel_table.h"

namespace hwaro::cuda {
void register_copy_kernels(KernelTable& table);       // Copy, Fill, Arange
void register_unary_kernels(KernelTable& table);      // Neg ... PowScalar
void register_binary_kernels(KernelTable& table);     // Add ... Where
void register_reduction_kernels(KernelTable& table);  // Sum, Prod, All, Any, Max, Min
void register_softmax_kernels(KernelTable& table);    // Softmax, LogSoftmax
void register_matmul_kernels(KernelTable& table);     // Matmul (cuBLAS / cuBLASLt)
void register_index_kernels(KernelTable& table);      // IndexSelect, Gather, Scatter, ScatterAdd
void register_random_kernels(KernelTable& table);     // RandUniform, RandNormal, RandInt
void register_optimizer_kernels(KernelTable& table);   // AdamStep, SgdStep
void register_window_kernels(KernelTable& table);     // Im2col, Col2im, MaxPool2d
void register_conv_kernels(KernelTable& table);       // Conv2d and its backward kernels (cuDNN, where found)
}  // namespace hwaro::cuda
