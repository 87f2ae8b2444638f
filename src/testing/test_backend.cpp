#include "testing/test_backend.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#include "core/backend_registry.h"
#include "hwaro/errors.h"

namespace hwaro::testing {
namespace {

class HostAllocator final : public Allocator {
 public:
  explicit HostAllocator(int index) : device_(DeviceType::Test, index) {}
  DataPtr allocate(std::size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
    void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
    HWARO_CHECK_AS(OutOfMemoryError, p != nullptr, "test device out of memory allocating ", nbytes, " bytes");
    return DataPtr(p, nullptr, [](void*, void* data) { std::free(data); }, device_);
  }

 private:
  Device device_;
};

class ImmediateStream final : public Stream {
 public:
  explicit ImmediateStream(int index) : device_(DeviceType::Test, index) {}
  Device device() const override { return device_; }
  void synchronize() override {}

 private:
  Device device_;
};

class TestBackend final : public Backend {
 public:
  TestBackend() {
    for (int i = 0; i < kTestDeviceCount; ++i) {
      allocators_[i] = std::make_unique<HostAllocator>(i);
      streams_[i] = std::make_unique<ImmediateStream>(i);
    }
  }
  DeviceType type() const override { return DeviceType::Test; }
  int device_count() const override { return kTestDeviceCount; }
  Allocator& allocator(int index) override { return *allocators_[index]; }
  Stream& current_stream(int index) override { return *streams_[index]; }
  // Both sides are host memory, so the CPU's copy kernel moves (and converts) the data.
  void copy(const TensorView& src, const TensorView& dst, Stream& stream) override {
    Backend& cpu = detail::backend(DeviceType::CPU);
    cpu.copy(src, dst, stream);
  }
  void synchronize(int /*index*/) override {}
  KernelFn kernel(OpId op, DType dtype) const override { return detail::backend(DeviceType::CPU).kernel(op, dtype); }

 private:
  std::unique_ptr<HostAllocator> allocators_[kTestDeviceCount];
  std::unique_ptr<ImmediateStream> streams_[kTestDeviceCount];
};

}  // namespace

void enable_test_backend() {
  static std::once_flag once;
  std::call_once(once, [] { detail::register_backend(std::make_unique<TestBackend>()); });
}

}  // namespace hwaro::testing
