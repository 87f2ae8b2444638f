#pragma once
// The CUDA backend's entry point for the library's start-up registration.
namespace hwaro::cuda {
void register_cuda_backend();
}  // namespace hwaro::cuda
