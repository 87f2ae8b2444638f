// hw::cuda::matmul's process-wide precision switch; matmul_kernels.cpp reads it on every call.
#include <atomic>

#include "hwaro/cuda.h"

namespace hwaro::cuda::matmul {
namespace {
std::atomic<bool> tf32_allowed{false};  // PyTorch's default
}  // namespace

void set_allow_tf32(bool allow) { tf32_allowed.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return tf32_allowed.load(std::memory_order_relaxed); }

}  // namespace hwaro::cuda::matmul
