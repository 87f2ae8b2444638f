#include "cuda/pinned_host_allocator.h"

#include <bit>

#include "cuda/cuda_check.h"
#include "cuda/stream_state.h"

namespace hwaro::cuda {

std::size_t PinnedHostAllocator::size_class(std::size_t nbytes) {
  return std::bit_ceil(nbytes < 512 ? std::size_t{512} : nbytes);
}

PinnedHostAllocator::~PinnedHostAllocator() {
  // At exit: the driver may already be shutting down, so errors are ignored.
  for (auto& [ptr, block] : blocks_) {
    for (cudaEvent_t e : block.events) cudaEventDestroy(e);
    cudaFreeHost(ptr);
  }
}

DataPtr PinnedHostAllocator::allocate(std::size_t nbytes) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, cpu);
  const std::size_t size = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
  char* ptr = nullptr;
  if (auto it = free_.find(size); it != free_.end()) {
    ptr = it->second;
    free_.erase(it);
  } else {
    void* p = nullptr;
    cudaError_t status = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (status != cudaSuccess) {  // give the cached blocks back and try once more
      cudaGetLastError();
      release_free_locked();
      status = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    }
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw OutOfMemoryError(::hwaro::detail::str_cat(
          "pinned host memory: cudaHostAlloc of ", size, " bytes (for a request of ", nbytes, ") failed: ",
          cudaGetErrorString(status), "; pin smaller tensors or fewer at once, or use pageable memory"));
    }
    ptr = static_cast<char*>(p);
    blocks_[ptr].size = size;
  }
  blocks_.at(ptr).in_use = true;
  return DataPtr(ptr, this, [](void* self, void* data) { static_cast<PinnedHostAllocator*>(self)->free(data); }, cpu);
}

void PinnedHostAllocator::record_stream(const void* ptr, int device, cudaStream_t stream) {
  const auto* p = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.upper_bound(const_cast<char*>(p));
  if (it == blocks_.begin()) return;
  --it;
  Block& block = it->second;
  if (!block.in_use || p >= it->first + block.size) return;
  for (const auto& use : block.uses) {
    if (use.first == device && use.second == stream) return;
  }
  block.uses.emplace_back(device, stream);
}

void PinnedHostAllocator::free(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block& block = blocks_.at(static_cast<char*>(ptr));
  block.in_use = false;
  // A deleter must not throw: if an event cannot be made, wait for the stream instead.
  for (const auto& [device, stream] : block.uses) {
    cudaEvent_t event = nullptr;
    if (cudaSetDevice(device) == cudaSuccess && cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess &&
        cudaEventRecord(event, stream) == cudaSuccess) {
      block.events.push_back(event);
    } else {
      cudaGetLastError();
      if (event != nullptr) cudaEventDestroy(event);
      cudaStreamSynchronize(stream);
    }
  }
  block.uses.clear();
  cudaSetDevice(detail::thread_device());
  if (block.events.empty()) free_.emplace(block.size, static_cast<char*>(ptr));
}

void PinnedHostAllocator::process_events_locked() {
  for (auto& [ptr, block] : blocks_) {
    if (block.in_use || block.events.empty()) continue;
    std::vector<cudaEvent_t> pending;
    for (cudaEvent_t e : block.events) {
      const cudaError_t status = cudaEventQuery(e);
      if (status == cudaErrorNotReady) {
        cudaGetLastError();
        pending.push_back(e);
      } else {
        HWARO_CUDA_CHECK(status);
        HWARO_CUDA_CHECK(cudaEventDestroy(e));
      }
    }
    block.events = std::move(pending);
    if (block.events.empty()) free_.emplace(block.size, ptr);
  }
}

void PinnedHostAllocator::release_free_locked() {
  for (const auto& [size, ptr] : free_) {
    HWARO_CUDA_CHECK(cudaFreeHost(ptr));
    blocks_.erase(ptr);
  }
  free_.clear();
}

void PinnedHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
  release_free_locked();
}

std::size_t PinnedHostAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& entry : free_) total += entry.first;
  return total;
}

std::size_t PinnedHostAllocator::live_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& [ptr, block] : blocks_) total += block.size;
  return total - [&] {
    std::size_t cached = 0;
    for (const auto& entry : free_) cached += entry.first;
    return cached;
  }();
}

}  // namespace hwaro::cuda
