#include "cpu/cpu_backend.h"

#include <memory>

#include "core/backend_registry.h"
#include "cpu/cpu_allocator.h"
#include "cpu/kernel_families.h"

namespace hwaro::cpu {
namespace {

// CPU work runs at once on the calling thread (and the pool), so there is nothing to wait for.
class CpuStream final : public Stream {
 public:
  Device device() const override { return Device(DeviceType::CPU); }
  void synchronize() override {}
};

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
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

  DeviceType type() const override { return DeviceType::CPU; }
  int device_count() const override { return 1; }
  Allocator& allocator(int /*index*/) override { return cpu_allocator(); }
  Stream& current_stream(int /*index*/) override { return stream_; }
  void copy(const TensorView& src, const TensorView& dst, Stream& stream) override {
    KernelArgs args;
    args.tensors[0] = dst;
    args.tensors[1] = src;
    args.num_tensors = 2;
    args.stream = &stream;
    table_.get(OpId::Copy, dst.dtype)(args);
  }
  void synchronize(int /*index*/) override {}
  KernelFn kernel(OpId op, DType dtype) const override { return table_.get(op, dtype); }

 private:
  KernelTable table_;
  CpuStream stream_;
};

}  // namespace

void register_cpu_backend() { detail::register_backend(std::make_unique<CpuBackend>()); }

}  // namespace hwaro::cpu
