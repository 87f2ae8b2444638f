// hw::cuda::record_stream: tells the caching allocator that a tensor's block is used on
// another stream, so that freeing it does not let that stream's pending work race a reuse.
#include "core/backend_registry.h"
#include "cuda/stream_state.h"
#include "hwaro/cuda.h"
#include "hwaro/tensor.h"

namespace hwaro::cuda {

void record_stream(const Tensor& tensor, const Stream& stream) {
  detail::require_gpu("hw::cuda::record_stream()");
  HWARO_CHECK(tensor.defined() && tensor.device().is_cuda(), "record_stream(): expected a CUDA tensor, got ",
              tensor.defined() ? tensor.device().str() : std::string("an undefined tensor"));
  HWARO_CHECK(tensor.device().index() == stream.device(), "record_stream(): the tensor is on ", tensor.device(),
              " but the stream is on cuda:", stream.device(), "; a block can only be used by streams of its device");
  auto* base = static_cast<char*>(tensor.data_ptr()) -
               tensor.storage_offset() * static_cast<std::int64_t>(tensor.element_size());
  if (base == nullptr) return;  // a zero-size tensor owns no block
  int index = 0;
  hwaro::detail::backend_for(tensor.device(), &index).record_stream(index, base, stream.native_handle());
}

}  // namespace hwaro::cuda
