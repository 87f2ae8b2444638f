#include "hwaro/device.h"

#include <charconv>
#include <cstdlib>
#include <ostream>

#include "core/backend_registry.h"
#include "hwaro/errors.h"

namespace hwaro {

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Test: return "test";
  }
  return "unknown";
}

namespace {

constexpr const char* kAcceptedForms = "accepted forms: 'cpu', 'cuda', 'cuda:N', 'test:N' (N a device index >= 0)";

void check_index(DeviceType type, int index) {
  HWARO_CHECK(index >= -1 && index <= 32767, "device index must be -1 (none) or non-negative, got ", index);
  HWARO_CHECK(type != DeviceType::CPU || index <= 0, "CPU device index must be -1 or 0, got ", index);
}

DeviceType parse_type(std::string_view name, std::string_view text) {
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    if (name == device_type_name(static_cast<DeviceType>(t))) return static_cast<DeviceType>(t);
  }
  throw Error(detail::str_cat("invalid device string '", text, "': unknown device type '", name, "'; ",
                              kAcceptedForms));
}

}  // namespace

Device::Device(DeviceType type, int index) : type_(type), index_(static_cast<std::int16_t>(index)) {
  check_index(type, index);
  if (type == DeviceType::CPU) index_ = -1;  // one CPU device: "cpu" and "cpu:0" are the same
}

Device::Device(std::string_view text) : type_(DeviceType::CPU), index_(-1) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const DeviceType type = parse_type(name, text);
  int index = -1;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const bool only_digits =
        !digits.empty() && digits.size() <= 5 && digits.find_first_not_of("0123456789") == std::string_view::npos;
    HWARO_CHECK(only_digits, "invalid device string '", text, "': '", digits,
                "' is not a device index; ", kAcceptedForms);
    std::from_chars(digits.data(), digits.data() + digits.size(), index);
    HWARO_CHECK(type != DeviceType::CPU || index == 0, "invalid device string '", text,
                "': there is one CPU device, 'cpu' (or 'cpu:0'); ", kAcceptedForms);
  }
  *this = Device(type, index);
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (has_index()) {
    s.push_back(':');
    s.append(std::to_string(index_));
  }
  return s;
}

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.str(); }

Device default_device() {
  if (const char* forced = std::getenv("HWARO_DEVICE"); forced != nullptr && *forced != '\0') {
    return Device(std::string_view(forced));
  }
  return detail::device_count(DeviceType::CUDA) > 0 ? Device(DeviceType::CUDA) : Device(DeviceType::CPU);
}

}  // namespace hwaro
