// hw::cuda::matmul's switch in a build without CUDA: it is kept (so code that sets it runs
// unchanged everywhere) but there is no CUDA matmul for it to affect.
#include <atomic>

#include "hwaro/cuda.h"

namespace hwaro::cuda::matmul {
namespace {
std::atomic<bool> tf32_allowed{false};
}  // namespace

void set_allow_tf32(bool allow) { tf32_allowed.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return tf32_allowed.load(std::memory_order_relaxed); }

}  // namespace hwaro::cuda::matmul
