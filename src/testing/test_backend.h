#pragma once
// The test backend: devices "test:0" .. "test:3" whose memory is ordinary host
// memory and whose kernels are the CPU's. It lets a machine without a GPU
// exercise everything that depends on tensors living on more than one device:
// the same-device check of every op, to(device) copies, multi-device code.
#include <cstdint>

#include "core/op_id.h"

namespace hwaro::testing {

inline constexpr int kTestDeviceCount = 4;

// Registers the backend (idempotent). Only tests call this; nothing else links it.
void enable_test_backend();

// Gives the test backend a pinned host allocator (core's HostBlockCache over ordinary
// memory), so that pin_memory() works without a GPU, for the rest of the process. Each copy
// between it and a test device records a completion event, as a GPU copy does. The data
// moves at once, but while copies are held (hold_copies(true)) those events stay pending
// until complete_copies() or a test device's stream is synchronised: that is how tests see
// what a slow non_blocking copy would let happen. Enables the test backend too.
void enable_test_pinned_memory();
void hold_copies(bool hold);
void complete_copies();

// How many times `op`'s kernel has run on the test devices since the process started, over
// every dtype: for tests of how many launches an operation takes (the fused optimiser's one
// launch per parameter group). Enables the test backend.
std::int64_t kernel_launches(OpId op);

}  // namespace hwaro::testing
