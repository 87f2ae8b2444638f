#pragma once
// The test backend: devices "test:0" .. "test:3" whose memory is ordinary host
// memory and whose kernels are the CPU's. It lets a machine without a GPU
// exercise everything that depends on tensors living on more than one device:
// the same-device check of every op, to(device) copies, multi-device code.
#include <cstdint>
#include <vector>

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

// Makes the `nth` allocation from now on "test:<index>" (1: the next one) throw OutOfMemoryError,
// once, as a GPU out of memory would: for tests of what code does when a copy to a device fails.
void fail_allocation(int index, int nth);

// How many times `op`'s kernel has run on the test devices since the process started, over
// every dtype: for tests of how many launches an operation takes (the fused optimiser's one
// launch per parameter group). Enables the test backend.
std::int64_t kernel_launches(OpId op);

// Fake streams on the test devices, for tests of code that orders work across streams
// (autograd's backward runs each node on its forward's stream). Any handle names a stream
// (nullptr: the default one); work still runs at once, but each thread has a current stream per
// test device, which launches record, and between start_stream_log() and take_stream_log() the
// backend logs every launch and every ordering asked of it (Backend::wait_stream, record_stream).
void set_current_stream(int index, void* stream);
struct StreamCall {
  enum class Kind { Wait, RecordStream } kind;
  int device;
  const void* what;  // Wait: the producer stream; RecordStream: the block's start
  void* stream;      // Wait: the waiting stream; RecordStream: the stream it is used on
};
struct LaunchRecord {
  OpId op;
  int device;
  void* stream;
};
struct StreamLog {
  std::vector<LaunchRecord> launches;
  std::vector<StreamCall> calls;
};
void start_stream_log();
StreamLog take_stream_log();

}  // namespace hwaro::testing
