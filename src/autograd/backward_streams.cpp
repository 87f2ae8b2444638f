#include "autograd/backward_streams.h"

#include <algorithm>

#include "core/backend_registry.h"
#include "core/storage.h"
#include "core/tensor_impl.h"

namespace hwaro::autograd {

StreamRef current_stream_of(Device device) {
  int index = 0;
  Backend& backend = detail::backend_for(device, &index);
  return {Device(device.type(), index), backend.current_stream(index).native_handle()};
}

void BackwardStreams::hand_over(const Tensor& grad, const StreamRef& producer, const StreamRef& consumer) {
  if (!grad.defined() || producer == consumer || producer.device != consumer.device) return;
  int index = 0;
  Backend& backend = detail::backend_for(consumer.device, &index);
  backend.wait_stream(index, consumer.stream, producer.stream);
  if (grad.device() != consumer.device) return;
  // The block starts where the storage does (a view's data pointer is inside it).
  const void* base = grad.impl()->storage()->data();
  if (base != nullptr) backend.record_stream(index, base, consumer.stream);
}

void BackwardStreams::ran_on(const StreamRef& stream) {
  if (std::find(used_.begin(), used_.end(), stream) == used_.end()) used_.push_back(stream);
}

void BackwardStreams::finish() {
  for (const StreamRef& used : used_) {
    const StreamRef caller = current_stream_of(used.device);
    if (caller == used) continue;
    int index = 0;
    detail::backend_for(used.device, &index).wait_stream(index, caller.stream, used.stream);
  }
}

StreamScope::StreamScope(const StreamRef& stream)
    : previous_(current_stream_of(stream.device)), changed_(!(previous_ == stream)) {
  if (!changed_) return;
  int index = 0;
  detail::backend_for(stream.device, &index).set_current_stream(index, stream.stream);
}

StreamScope::~StreamScope() {
  if (!changed_) return;
  int index = 0;
  detail::backend_for(previous_.device, &index).set_current_stream(index, previous_.stream);
}

}  // namespace hwaro::autograd
