#include "core/backend_registry.h"

#include <array>
#include <atomic>
#include <mutex>
#include <string>

#include "hwaro/errors.h"

namespace hwaro::detail {
namespace {

struct Registry {
  std::array<std::atomic<Backend*>, kNumDeviceTypes> backends{};
  std::mutex mutex;  // serialises registration; lookups read the atomics
};

Registry& raw_registry() {
  static Registry* registry = new Registry();  // never destroyed: backends outlive static destructors
  return *registry;
}

Registry& registry() {
  static std::once_flag once;
  std::call_once(once, [] { register_builtin_backends(); });
  return raw_registry();
}

std::string built_list() {
  std::string names;
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    if (raw_registry().backends[t].load() != nullptr) {
      names += (names.empty() ? "" : ", ");
      names += device_type_name(static_cast<DeviceType>(t));
    }
  }
  return names;
}

}  // namespace

void register_backend(std::unique_ptr<Backend> backend) {
  Registry& r = raw_registry();
  std::lock_guard lock(r.mutex);
  auto& slot = r.backends[static_cast<int>(backend->type())];
  HWARO_ASSERT(slot.load() == nullptr, "backend registered twice: ", device_type_name(backend->type()));
  slot.store(backend.release());
}

Backend* find_backend(DeviceType type) { return registry().backends[static_cast<int>(type)].load(); }

Backend& backend(DeviceType type) {
  Backend* b = find_backend(type);
  HWARO_CHECK(b != nullptr, "backend '", device_type_name(type), "' is not built; built: ", built_list());
  return *b;
}

int device_count(DeviceType type) {
  Backend* b = find_backend(type);
  return b == nullptr ? 0 : b->device_count();
}

Backend& backend_for(Device device, int* resolved_index) {
  // A device type whose backend is not built has no devices: say so in the words used when it is
  // built but finds no hardware, with the build's reason.
  HWARO_CHECK(find_backend(device.type()) != nullptr, "no ", device_type_name(device.type()),
              " device is available (backend '", device_type_name(device.type()), "' is not built; built: ",
              built_list(), "), so '", device.str(), "' cannot be used; use hw::default_device() to fall back to the CPU");
  Backend& b = backend(device.type());
  if (device.is_cpu()) {
    *resolved_index = 0;
    return b;
  }
  const int count = b.device_count();
  if (count == 0) {
    const std::string why = b.unavailable_reason();
    throw Error(str_cat("no ", device_type_name(device.type()), " device is available",
                        why.empty() ? "" : " (", why, why.empty() ? "" : ")", ", so '", device.str(),
                        "' cannot be used; use hw::default_device() to fall back to the CPU"));
  }
  const int index = device.has_index() ? device.index() : b.current_device();
  HWARO_CHECK_AS(IndexError, index < count, "device '", device.str(), "' does not exist: ", count, " ",
                 device_type_name(device.type()), " device", count == 1 ? " is" : "s are",
                 " visible (valid indices 0..", count - 1, ")");
  *resolved_index = index;
  return b;
}

Device resolve(Device device) {
  int index = 0;
  backend_for(device, &index);
  return device.is_cpu() ? device : Device(device.type(), index);
}

}  // namespace hwaro::detail
