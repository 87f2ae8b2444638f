#include <vector>

#include "hwaro/autograd.h"

namespace hwaro::autograd {

Node::~Node() {
  // Each node of a chain would free the next from inside its own destructor; instead the
  // predecessors only this node holds are queued, and the outermost destructor drains them.
  thread_local bool draining = false;
  thread_local std::vector<std::shared_ptr<Node>> queued;
  for (Edge& e : next_edges_) {
    if (e.node && e.node.use_count() == 1) queued.push_back(std::move(e.node));
  }
  next_edges_.clear();
  if (draining) return;
  draining = true;
  while (!queued.empty()) {
    std::shared_ptr<Node> next = std::move(queued.back());
    queued.pop_back();
    next.reset();
  }
  draining = false;
}

}  // namespace hwaro::autograd
