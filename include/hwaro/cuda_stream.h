#pragma once
// hw::cuda's execution model (guide §4.2): the current device of each thread, streams,
// events and synchronisation. GPU work is asynchronous: an op returns once its kernel is
// queued, so timing it needs synchronize(), an Event pair, or hw::Timer (hwaro/timer.h).
//
// Without a usable GPU (or in a build without CUDA) every call that needs one throws
// hw::Error saying why no GPU is available, as PyTorch does; an Event that was never
// recorded needs no GPU (query() is true, synchronize() returns).
#include <cstddef>

namespace hwaro {
class Tensor;
}

namespace hwaro::cuda {

// The current CUDA device of this thread ("cuda" with no index means it); 0 at start.
void set_device(int device);
int current_device();

// Makes `device` current for this thread for the guard's lifetime; -1 leaves it unchanged.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
};

// A handle to a CUDA stream: an ordered queue of work on one device. Copying the handle
// does not copy the stream. Streams come from a pool per device and live until exit.
class Stream {
 public:
  int device() const { return device_; }
  void synchronize() const;  // blocks until all work queued on the stream has finished
  bool query() const;        // whether all work queued on it has finished
  void* native_handle() const { return handle_; }  // the cudaStream_t; nullptr is the default stream
  bool operator==(const Stream& other) const { return device_ == other.device_ && handle_ == other.handle_; }

  // Internal: made by new_stream/current_stream/default_stream.
  Stream(int device, void* handle) : device_(device), handle_(handle) {}

 private:
  int device_;
  void* handle_;
};

// device -1 means the current device. priority: 0 is the default, negative is higher
// (CUDA's convention, clamped to what the device offers).
Stream new_stream(int device = -1, int priority = 0);
Stream current_stream(int device = -1);
Stream default_stream(int device = -1);

// Makes `stream` the current stream of its device for this thread, and its device the
// current device, for the guard's lifetime: ops on that device enqueue on it.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
  int previous_device_;
};

// A CUDA event: a mark in a stream's queue. Created on first record().
class Event {
 public:
  explicit Event(bool enable_timing = false) : timing_(enable_timing) {}
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  void record();                      // on the current stream of the current device
  void record(const Stream& stream);  // marks the current end of stream's queued work
  bool query() const;                 // whether the stream has passed the mark (true if never recorded)
  void synchronize() const;           // blocks the host until it has
  void wait(const Stream& stream) const;  // makes later work on `stream` wait for the mark (host does not block)
  void wait() const;                      // ... on the current stream
  // Milliseconds from this event to `end`; both recorded with enable_timing=true and complete.
  float elapsed_time(const Event& end) const;
  bool is_recorded() const { return event_ != nullptr; }

 private:
  bool timing_;
  int device_ = -1;
  void* event_ = nullptr;  // cudaEvent_t
};

// Blocks until all work on `device` (-1: the current device) has finished, on every stream.
void synchronize(int device = -1);

// Marks a use of tensor's memory on `stream` (not the stream it was allocated on): when the
// tensor is freed, its block is reused only after the work queued on `stream` up to then has
// finished. Needed for tensors made on one stream and used on another.
void record_stream(const Tensor& tensor, const Stream& stream);

}  // namespace hwaro::cuda
