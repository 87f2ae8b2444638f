// The CUDA backend: devices, the caching allocator, each thread's current stream,
// copies, and the kernel table that the families of kernel_families.h fill.
#include "cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "core/backend_registry.h"
#include "cuda/caching_device_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_query.h"
#include "cuda/kernel_families.h"
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
  }
  DeviceType type() const override { return DeviceType::CUDA; }
  int device_count() const override { return detail::availability().device_count; }
  std::string unavailable_reason() const override { return detail::availability().reason; }
  Allocator& allocator(int index) override { return *allocators_.at(static_cast<std::size_t>(index)); }
  int current_device() const override { return detail::thread_device(); }
  // This thread's current stream of the device: the default stream unless a StreamGuard says otherwise.
  hwaro::Stream& current_stream(int index) override { return detail::current_stream_object(index); }
  void copy(const TensorView& src, const TensorView& dst, hwaro::Stream& stream) override {
    HWARO_CHECK(src.dtype == dst.dtype && src.is_contiguous() && dst.is_contiguous(),
                "CUDA copies of non-contiguous or dtype-converting views need the CUDA kernels");
    const std::size_t nbytes = static_cast<std::size_t>(dst.numel()) * element_size(dst.dtype);
    const int index = dst.device.is_cuda() ? dst.device.index() : src.device.index();
    HWARO_CUDA_CHECK(cudaSetDevice(index));
    HWARO_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, nbytes, cudaMemcpyDefault,
                                     static_cast<cudaStream_t>(stream.native_handle())));
  }
  // All work on the device, every stream (hw::Timer relies on this).
  void synchronize(int index) override {
    HWARO_CUDA_CHECK(cudaSetDevice(index));
    HWARO_CUDA_CHECK(cudaDeviceSynchronize());
    HWARO_CUDA_CHECK(cudaSetDevice(detail::thread_device()));
  }
  KernelFn kernel(OpId op, DType dtype) const override { return table_.get(op, dtype); }

 private:
  std::vector<std::unique_ptr<CachingDeviceAllocator>> allocators_;
  KernelTable table_;
};

}  // namespace

void register_cuda_backend() { hwaro::detail::register_backend(std::make_unique<CudaBackend>()); }

}  // namespace hwaro::cuda
