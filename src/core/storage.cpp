#include "core/storage.h"

#include <atomic>
#include <cstdio>

#include "core/backend_registry.h"

namespace hwaro {

namespace {
// pin_memory on a machine without CUDA carries on with pageable memory, as PyTorch does; say so once.
Allocator* pinned_allocator_or_warn() {
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    Backend* b = detail::find_backend(static_cast<DeviceType>(t));
    if (b != nullptr && b->device_count() > 0) {
      if (Allocator* pinned = b->pinned_host_allocator()) return pinned;
    }
  }
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    std::fprintf(stderr, "hwaro: warning: pinned memory was requested but no GPU is available; using pageable memory\n");
  }
  return nullptr;
}
}  // namespace

std::shared_ptr<Storage> Storage::allocate(Device device, std::size_t nbytes, bool pinned) {
  int index = 0;
  Backend& backend = detail::backend_for(device, &index);
  if (pinned && device.is_cpu()) {
    if (Allocator* pinned_allocator = pinned_allocator_or_warn()) {
      return std::make_shared<Storage>(pinned_allocator->allocate(nbytes), nbytes, pinned_allocator);
    }
  }
  Allocator& allocator = backend.allocator(index);
  return std::make_shared<Storage>(allocator.allocate(nbytes), nbytes, allocator.is_pinned() ? &allocator : nullptr);
}

}  // namespace hwaro
