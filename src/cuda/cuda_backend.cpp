// The CUDA backend: devices, the caching allocator, each device's default stream,
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

namespace hwaro::cuda {
namespace {

class DefaultStream final : public Stream {
 public:
  explicit DefaultStream(int index) : index_(index) {}
  Device device() const override { return Device(DeviceType::CUDA, index_); }
  void synchronize() override {
    HWARO_CUDA_CHECK(cudaSetDevice(index_));
    HWARO_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }

 private:
  int index_;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    for (int i = 0; i < device_count(); ++i) {
      allocators_.push_back(std::make_unique<CachingDeviceAllocator>(i));
      streams_.push_back(std::make_unique<DefaultStream>(i));
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
  Stream& current_stream(int index) override { return *streams_.at(static_cast<std::size_t>(index)); }
  void copy(const TensorView& src, const TensorView& dst, Stream& stream) override {
    HWARO_CHECK(src.dtype == dst.dtype && src.is_contiguous() && dst.is_contiguous(),
                "CUDA copies of non-contiguous or dtype-converting views need the CUDA kernels");
    const std::size_t nbytes = static_cast<std::size_t>(dst.numel()) * element_size(dst.dtype);
    const int index = dst.device.is_cuda() ? dst.device.index() : src.device.index();
    HWARO_CUDA_CHECK(cudaSetDevice(index));
    HWARO_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, nbytes, cudaMemcpyDefault,
                                     static_cast<cudaStream_t>(stream.native_handle())));
  }
  void synchronize(int index) override { streams_.at(static_cast<std::size_t>(index))->synchronize(); }
  KernelFn kernel(OpId op, DType dtype) const override { return table_.get(op, dtype); }

 private:
  std::vector<std::unique_ptr<CachingDeviceAllocator>> allocators_;
  std::vector<std::unique_ptr<DefaultStream>> streams_;
  KernelTable table_;
};

}  // namespace

void register_cuda_backend() { hwaro::detail::register_backend(std::make_unique<CudaBackend>()); }

}  // namespace hwaro::cuda
