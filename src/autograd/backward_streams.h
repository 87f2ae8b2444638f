#pragma once
// PyTorch's stream semantics of backward, for backends with several streams per device (CUDA):
// each node runs on the stream its forward ran on; a gradient made on one stream and used on
// another is ordered (the user waits for the maker) and its block marked as used there, so that
// freeing it cannot let a reuse race the use; at the end, the caller's current streams wait for
// every stream the pass ran on, so that the caller may use the gradients at once. On the CPU
// (one stream) all of it does nothing.
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::autograd {

struct StreamRef {
  Device device{DeviceType::CPU};
  void* stream = nullptr;  // native handle; nullptr: the default stream
  bool operator==(const StreamRef& other) const = default;
};

// This thread's current stream of `device`.
StreamRef current_stream_of(Device device);

class BackwardStreams {
 public:
  // Orders `grad`, made on `producer`, before its use on `consumer`. Nothing to do for the same
  // stream, or for streams of different devices (the copy between devices orders itself).
  void hand_over(const Tensor& grad, const StreamRef& producer, const StreamRef& consumer);
  // Remembers a stream the pass ran a node on.
  void ran_on(const StreamRef& stream);
  // The caller's current streams wait for the other streams the pass ran on. Call it with no
  // StreamScope open, so that the current streams are the caller's.
  void finish();

 private:
  std::vector<StreamRef> used_;
};

// Makes a stream the current one of its device for the scope's lifetime.
class StreamScope {
 public:
  explicit StreamScope(const StreamRef& stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  StreamRef previous_;
  bool changed_;
};

}  // namespace hwaro::autograd
