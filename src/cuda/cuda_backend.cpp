// The CUDA backend: devices, the caching allocator, each thread's current stream,
// copies, and the kernel table that the families of kernel_families.h fill.
#include "cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "core/backend_registry.h"
#include "cuda/caching_device_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_query.h"
#include "cuda/kernel_families.h"
#include "cuda/pinned_host_allocator.h"
#include "cuda/stream_state.h"

namespace hwaro::cuda {
namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    for (int i = 0; i < device_count(); ++i) {
      allocators_.push_back(std::make_unique<CachingDeviceAllocator>(i));
    }
    register_copy_kernels(table_);
    register_unary_kernels(table_);
    register_binary_kernels(table_);
    register_reduction_kernels(table_);
    register_softmax_kernels(table_);
    register_matmul_kernels(table_);
    register_index_kernels(table_);
    register_random_kernels(table_);
    register_optimizer_kernels(table_);
    register_window_kernels(table_);
    register_conv_kernels(table_);
  }
  DeviceType type() const override { return DeviceType::CUDA; }
  int device_count() const override { return detail::availability().device_count; }
  std::string unavailable_reason() const override { return detail::availability().reason; }
  Allocator& allocator(int index) override { return *allocators_.at(static_cast<std::size_t>(index)); }
  int current_device() const override { return detail::thread_device(); }
  // This thread's current stream of the device: the default stream unless a StreamGuard says otherwise.
  hwaro::Stream& current_stream(int index) override { return detail::current_stream_object(index); }
  Allocator* pinned_host_allocator() override { return &pinned_; }
  // Host<->device copies run on `stream` (the current stream of the GPU side): asynchronous
  // for pinned host memory, whose block then is not reused before the copy's event. Copies
  // between two GPUs run on the destination's stream, with peer access where the hardware has
  // it, after the source's current stream has passed the work that produced the source; and
  // the source's stream then waits for the copy, as PyTorch's, so that the source's memory is
  // neither rewritten nor handed out again (the caching allocator reuses it in the order of
  // that stream) while the copy still reads it.
  void copy(const TensorView& src, const TensorView& dst, hwaro::Stream& stream) override {
    HWARO_CHECK(src.dtype == dst.dtype && src.is_contiguous() && dst.is_contiguous(),
                "CUDA copies of non-contiguous or dtype-converting views need the CUDA kernels");
    const std::size_t nbytes = static_cast<std::size_t>(dst.numel()) * element_size(dst.dtype);
    const int index = dst.device.is_cuda() ? dst.device.index() : src.device.index();
    auto* handle = static_cast<cudaStream_t>(stream.native_handle());
    HWARO_CUDA_CHECK(cudaSetDevice(index));
    const bool between_gpus = src.device.is_cuda() && dst.device.is_cuda() && src.device.index() != index;
    if (between_gpus) {
      enable_peer_access(index, src.device.index());
      order_after(src.device.index(), detail::current_handle(src.device.index()), index, handle);
      HWARO_CUDA_CHECK(cudaSetDevice(index));
    }
    HWARO_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, nbytes, cudaMemcpyDefault, handle));
    if (between_gpus) order_after(index, handle, src.device.index(), detail::current_handle(src.device.index()));
    if (src.device.is_cpu()) pinned_.record_event(src.data, index, handle);
    if (dst.device.is_cpu()) pinned_.record_event(dst.data, index, handle);
    HWARO_CUDA_CHECK(cudaSetDevice(detail::thread_device()));
  }
  // All work on the device, every stream (hw::Timer relies on this).
  void synchronize(int index) override {
    const detail::ScopedDevice on(index);
    HWARO_CUDA_CHECK(cudaDeviceSynchronize());
  }
  KernelFn kernel(OpId op, DType dtype) const override { return table_.get(op, dtype); }

  void set_current_stream(int index, void* stream) override {
    detail::set_current_handle(index, static_cast<cudaStream_t>(stream));
  }
  void wait_stream(int index, void* waiter, void* producer) override {
    order_after(index, static_cast<cudaStream_t>(producer), index, static_cast<cudaStream_t>(waiter));
    HWARO_CUDA_CHECK(cudaSetDevice(detail::thread_device()));
  }
  // Native mode (no cache): cudaFree waits for the device, so no block is reused early.
  void record_stream(int index, const void* base, void* stream) override {
    BlockCache* cache = allocators_.at(static_cast<std::size_t>(index))->cache();
    if (cache != nullptr) cache->record_stream(const_cast<void*>(base), reinterpret_cast<StreamId>(stream));
  }

 private:
  std::vector<std::unique_ptr<CachingDeviceAllocator>> allocators_;
  PinnedHostAllocator pinned_;
  KernelTable table_;

  // Lets `device` read and write `peer`'s memory directly, once, where cudaDeviceCanAccessPeer
  // says it can; otherwise cudaMemcpyAsync stages the copy through the host.
  void enable_peer_access(int device, int peer) {
    std::lock_guard<std::mutex> lock(peer_mutex_);
    if (!peer_checked_.insert({device, peer}).second) return;
    int can = 0;
    HWARO_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
    if (can == 0) return;
    const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
      return;
    }
    HWARO_CUDA_CHECK(status);
  }
  // Makes `waiter`, a stream of `waiter_device`, wait for the work queued so far on `producer`, a
  // stream of `producer_device` (the two devices may differ). Each stream's own device is current
  // where it is named, since a null handle means the legacy default stream of the current device.
  // Leaves `waiter_device` current.
  static void order_after(int producer_device, cudaStream_t producer, int waiter_device, cudaStream_t waiter) {
    cudaEvent_t event = nullptr;
    HWARO_CUDA_CHECK(cudaSetDevice(producer_device));
    HWARO_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    HWARO_CUDA_CHECK(cudaEventRecord(event, producer));
    HWARO_CUDA_CHECK(cudaSetDevice(waiter_device));
    HWARO_CUDA_CHECK(cudaStreamWaitEvent(waiter, event, 0));
    if (waiter_device != producer_device) HWARO_CUDA_CHECK(cudaSetDevice(producer_device));  // an event dies on its own device
    HWARO_CUDA_CHECK(cudaEventDestroy(event));  // destroyed once complete; the wait still holds
    if (waiter_device != producer_device) HWARO_CUDA_CHECK(cudaSetDevice(waiter_device));
  }
  std::mutex peer_mutex_;
  std::set<std::pair<int, int>> peer_checked_;
};

}  // namespace

void register_cuda_backend() { hwaro::detail::register_backend(std::make_unique<CudaBackend>()); }

}  // namespace hwaro::cuda
