// The recorder the ops call through ops::GradScope: wraps the call in a RuleNode and makes it
// the result's grad_fn.
#include <atomic>

#include "autograd/autograd_meta.h"
#include "autograd/backward_streams.h"
#include "autograd/install.h"
#include "autograd/rule_node.h"

namespace hwaro::autograd {

namespace {

std::atomic<std::uint64_t> next_sequence_nr{0};

void record(ops::GradCall&& call, const Tensor& out) {
  auto node = std::make_shared<RuleNode>(std::move(call), out);
  node->set_sequence_nr(next_sequence_nr.fetch_add(1, std::memory_order_relaxed));
  const StreamRef forward_stream = current_stream_of(out.device());
  node->set_stream(forward_stream.device, forward_stream.stream);
  AutogradMeta& meta = ensure_meta(out);
  meta.grad_fn = std::move(node);
  out.impl()->set_requires_grad(true);
}

}  // namespace

void install() { ops::set_grad_recorder(&record); }

}  // namespace hwaro::autograd
