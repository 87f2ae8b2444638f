#pragma once
// The test backend: devices "test:0" .. "test:3" whose memory is ordinary host
// memory and whose kernels are the CPU's. It lets a machine without a GPU
// exercise everything that depends on tensors living on more than one device:
// the same-device check of every op, to(device) copies, multi-device code.
namespace hwaro::testing {

inline constexpr int kTestDeviceCount = 4;

// Registers the backend (idempotent). Only tests call this; nothing else links it.
void enable_test_backend();

}  // namespace hwaro::testing
