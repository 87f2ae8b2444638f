// The backward engine: an iterative walk (no recursion, so deep graphs cannot overflow the
// stack). It counts each node's consumers in the graph, then runs nodes whose gradients are
// complete, latest-created first, summing the gradients that reach each node.
#include <queue>
#include <unordered_map>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "hwaro/ops.h"

namespace hwaro::autograd {

namespace {

struct Later {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// How many edges inside the graph lead into each node reachable from roots.
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

void add_into(Tensor& slot, const Tensor& grad) {
  if (!grad.defined()) return;
  slot = slot.defined() ? slot + grad : grad;
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors, bool retain_graph) {
  HWARO_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "backward: got ", tensors.size(),
              " tensors but ", grad_tensors.size(), " gradients; give one gradient per tensor (or none)");
  NoGradGuard no_grad;  // gradients are computed without recording a graph of their own
  std::unordered_map<Node*, Tensor> pending;  // summed gradient waiting at each node
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
    HWARO_CHECK(g.device() == t.device(), "backward: the gradient is on ", g.device(), " but the tensor is on ",
                t.device());
    const Edge edge = gradient_edge(t);
    keep_alive.push_back(edge.node);
    add_into(pending[edge.node.get()], g);
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
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    Tensor grad = std::move(pending[node]);
    pending.erase(node);
    std::vector<Tensor> input_grads;
    if (grad.defined()) {
      for (const auto& hook : node->pre_hooks()) hook(grad);
      input_grads = node->apply(grad);
    }
    const std::vector<Edge>& edges = node->next_edges();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      Node* next = edges[i].node.get();
      if (next == nullptr) continue;
      if (i < input_grads.size()) add_into(pending[next], input_grads[i]);
      if (--deps[next] == 0) ready.push(next);
    }
    if (!retain_graph) node->release_saved();
  }
}

}  // namespace hwaro::autograd
