// The backward engine: an iterative walk (no recursion, so deep graphs cannot overflow the
// stack). It counts each node's consumers in the graph, then runs nodes whose gradients are
// complete, latest-created first, summing the gradients that reach each node. Each node runs on
// its forward's stream (backward_streams.h); a gradient remembers the stream it was made on.
#include <queue>
#include <unordered_map>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/backward_streams.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

struct Later {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// How many edges inside the graph lead into each node reachable from roots; checks each node
// (Node::check_before_backward) on the way, before any of them runs.
std::unordered_map<Node*, int> count_dependencies(const std::vector<Node*>& roots) {
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_map<Node*, bool> seen;
  for (Node* r : roots) {
    if (!seen[r]) {
      seen[r] = true;
      stack.push_back(r);
    }
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    n->check_before_backward();
    for (const Edge& e : n->next_edges()) {
      if (!e.node) continue;
      ++deps[e.node.get()];
      if (!seen[e.node.get()]) {
        seen[e.node.get()] = true;
        stack.push_back(e.node.get());
      }
    }
  }
  return deps;
}

// The gradient summed so far for a node, and the stream its last part was made on.
struct PendingGrad {
  Tensor grad;
  StreamRef stream;
};

// Adds grad, made on `made_on` (the current stream of its device), into slot.
void add_into(PendingGrad& slot, const Tensor& grad, const StreamRef& made_on, BackwardStreams& streams) {
  if (!grad.defined()) return;
  if (!slot.grad.defined()) {
    slot = {grad, made_on};
    return;
  }
  streams.hand_over(slot.grad, slot.stream, made_on);
  slot = {slot.grad + grad, made_on};
}

// Runs every node as it becomes ready (deps reach 0), each on its forward's stream.
void run_ready_nodes(std::priority_queue<Node*, std::vector<Node*>, Later>& ready,
                     std::unordered_map<Node*, PendingGrad>& pending, std::unordered_map<Node*, int>& deps,
                     BackwardStreams& streams, bool retain_graph) {
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    const PendingGrad in = std::move(pending[node]);
    pending.erase(node);
    const StreamRef run_on = node->has_stream() ? StreamRef{node->stream_device(), node->stream()} : in.stream;
    streams.hand_over(in.grad, in.stream, run_on);
    streams.ran_on(run_on);
    {
      const StreamScope scope(run_on);
      std::vector<Tensor> input_grads;
      if (in.grad.defined()) {
        for (const auto& hook : node->pre_hooks()) hook(in.grad);
        input_grads = node->apply(in.grad);
      }
      const std::vector<Edge>& edges = node->next_edges();
      for (std::size_t i = 0; i < edges.size(); ++i) {
        Node* next = edges[i].node.get();
        if (next == nullptr) continue;
        if (i < input_grads.size() && input_grads[i].defined()) {
          const Tensor& g = input_grads[i];
          add_into(pending[next], g, g.device() == run_on.device ? run_on : current_stream_of(g.device()), streams);
        }
        if (--deps[next] == 0) ready.push(next);
      }
    }
    if (!retain_graph) node->release_saved();
  }
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors, bool retain_graph) {
  HWARO_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "backward: got ", tensors.size(),
              " tensors but ", grad_tensors.size(), " gradients; give one gradient per tensor (or none)");
  NoGradGuard no_grad;  // gradients are computed without recording a graph of their own
  std::unordered_map<Node*, PendingGrad> pending;  // summed gradient waiting at each node
  BackwardStreams streams;
  std::vector<Node*> roots;
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    HWARO_CHECK(t.defined() && t.requires_grad(), "element ", i, " of the tensors given to backward does not ",
                "require grad and has no grad_fn: nothing it was computed from requires grad");
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      HWARO_CHECK(t.numel() == 1, "grad can be implicitly created only for one-element outputs; this one has shape ",
                  t.sizes(), ": pass a gradient of that shape to backward()");
      g = ones_like(t);
    }
    HWARO_CHECK(g.sizes() == t.sizes(), "backward: the gradient has shape ", g.sizes(), " but the tensor has shape ",
                t.sizes());
    HWARO_CHECK_AS(DeviceMismatchError, g.device() == t.device(), "backward: the gradient is on ", g.device(), " but the tensor is on ",
                t.device());
    HWARO_CHECK(is_floating_point(g.dtype()), "backward: the gradient must have a floating point dtype, like the ",
                "tensor's (", t.dtype(), "), but it is ", g.dtype());
    // The rules compute in the dtype of the gradient they get; another float dtype is converted, as
    // PyTorch's engine does, so that they do not mix dtypes (mm refuses that).
    if (g.dtype() != t.dtype()) g = g.to(t.dtype());
    const Edge edge = gradient_edge(t);
    keep_alive.push_back(edge.node);
    add_into(pending[edge.node.get()], g, current_stream_of(g.device()), streams);
    roots.push_back(edge.node.get());
  }

  std::unordered_map<Node*, int> deps = count_dependencies(roots);
  std::priority_queue<Node*, std::vector<Node*>, Later> ready;
  for (Node* r : roots) {
    if (deps[r] == 0) {
      deps[r] = -1;  // queued once
      ready.push(r);
    }
  }
  try {
    run_ready_nodes(ready, pending, deps, streams, retain_graph);
  } catch (...) {
    // Leaves may hold gradients already: order the caller's streams after what ran, as a finished
    // backward does. The first error is the one to report, so a second one here is dropped.
    try {
      streams.finish();
    } catch (...) {
    }
    throw;
  }
  streams.finish();
}

}  // namespace hwaro::autograd
