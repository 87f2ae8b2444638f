#pragma once
// hw::Device: a small hashable value naming where a tensor lives, as torch.device.
//
//   hw::Device("cpu"), hw::Device("cuda"), hw::Device("cuda:1"), hw::Device(hw::kCUDA, 1)
//
// "cuda" without an index means the current CUDA device; tensors always carry a
// concrete index. An index past the last device constructs, and the first use
// of it throws an error saying how many devices exist.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace hwaro {

enum class DeviceType : std::int8_t {
  CPU = 0,
  CUDA = 1,
  // The test backend (src/testing): host memory presented as a separate device,
  // so device checks and multi-device code run on machines without a GPU.
  Test = 2,
};
inline constexpr int kNumDeviceTypes = 3;
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr DeviceType kTestDevice = DeviceType::Test;

// "cpu", "cuda", "test".
const char* device_type_name(DeviceType type);

class Device {
 public:
  // index -1 means "no index": the current device of that type.
  Device(DeviceType type, int index = -1);  // NOLINT(google-explicit-constructor): as torch.device
  Device(std::string_view text);            // NOLINT: "cpu", "cuda", "cuda:N", "test:N"
  Device(const char* text) : Device(std::string_view(text)) {}           // NOLINT
  Device(const std::string& text) : Device(std::string_view(text)) {}    // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;

  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  DeviceType type_;
  std::int16_t index_;
};

std::ostream& operator<<(std::ostream& out, const Device& device);

// CUDA if a CUDA device is available, else CPU (the guide's standard pattern).
// The environment variable HWARO_DEVICE=cpu|cuda|cuda:N overrides the choice.
Device default_device();

}  // namespace hwaro

template <>
struct std::hash<hwaro::Device> {
  std::size_t operator()(const hwaro::Device& d) const noexcept {
    return std::hash<int>()(static_cast<int>(d.type()) * 65537 + d.index());
  }
};
