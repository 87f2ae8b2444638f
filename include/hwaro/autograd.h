#pragma once
// Autograd: the graph that ops record while grad mode is on, and what walks it.
//   auto w = hw::randn({3}, {.requires_grad = true});
//   auto loss = (w * w).sum();
//   loss.backward();            // w.grad() == 2 * w
//   { hw::NoGradGuard no_grad; w.sub_(0.1 * w.grad()); }   // updates are not recorded
// Gradients accumulate into .grad() of leaves (tensors made by the user with
// requires_grad). As PyTorch's, a node saves only the tensors its gradient reads (an addition, a
// sum or a view keeps only sizes); they are freed after backward unless retain_graph, and only a
// node that saved some refuses a second pass.
// On a GPU, backward runs each op's gradient on the stream its forward ran on, and the caller's
// current stream waits for those streams before backward returns (PyTorch's stream semantics).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro {

// torch.is_grad_enabled / torch.set_grad_enabled: per thread.
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Sets grad mode for a scope and restores the previous one at its end.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// torch.no_grad(): nothing inside is recorded (evaluation, optimiser updates).
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

namespace autograd {

class Node;

// An input of a node: the node that produced it and which of that node's outputs it was.
struct Edge {
  std::shared_ptr<Node> node;  // null when the input needs no gradient
  std::uint32_t input_nr = 0;
};

// One recorded op. apply() maps the gradient of its output to gradients of its inputs
// (one per next edge; an undefined tensor where an input gets none).
class Node {
 public:
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Releases a long chain of predecessors iteratively, so that freeing a deep graph cannot
  // overflow the stack.
  virtual ~Node();
  virtual std::string name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_output) = 0;
  // Frees the tensors saved for backward (after a backward without retain_graph).
  virtual void release_saved() {}
  // Called on every node of the graph before any node runs, so that a backward that cannot finish
  // (a .grad set on another device) refuses before it has changed anything; throws hw::Error.
  virtual void check_before_backward() const {}

  // Called with the gradient of the node's output before apply() (retain_grad uses one).
  using PreHook = std::function<void(const Tensor& grad_output)>;
  void add_pre_hook(PreHook hook) { pre_hooks_.push_back(std::move(hook)); }
  const std::vector<PreHook>& pre_hooks() const { return pre_hooks_; }

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  // Creation order: the engine runs later nodes first. A node that ends a path (a leaf's
  // accumulation) takes kAsSoonAsReady, as PyTorch's AccumulateGrad: it runs the moment its
  // gradient is complete, so that .grad (and DistributedDataParallel's bucket all-reduce, which
  // starts from there) is not held back until the rest of backward has run.
  static constexpr std::uint64_t kAsSoonAsReady = ~std::uint64_t{0};
  std::uint64_t sequence_nr() const { return sequence_nr_; }
  void set_sequence_nr(std::uint64_t n) { sequence_nr_ = n; }

  // The stream the forward op ran on: its device and native handle (a cudaStream_t; nullptr is
  // the default stream). The engine runs apply() on it, as PyTorch does. Nodes no op made
  // (AccumulateGrad) have none and run on the stream of the gradient they receive.
  void set_stream(Device device, void* stream) {
    stream_device_ = device;
    stream_ = stream;
    has_stream_ = true;
  }
  bool has_stream() const { return has_stream_; }
  Device stream_device() const { return stream_device_; }
  void* stream() const { return stream_; }

 private:
  std::vector<Edge> next_edges_;
  std::vector<PreHook> pre_hooks_;
  std::uint64_t sequence_nr_ = 0;
  Device stream_device_{DeviceType::CPU};
  void* stream_ = nullptr;
  bool has_stream_ = false;
};

// Backward from several roots at once (torch.autograd.backward). grad_tensors may be empty
// when every root is a one-element tensor (then each gets 1).
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              bool retain_graph = false);

// Checks a function's gradients against central finite differences, in float64: the
// vector-Jacobian product for a fresh random vector v, d(sum(v * fn(inputs)))/d(input), is
// computed by backward and numerically for every element of every input that requires grad.
// Inputs must be float64 CPU tensors (they may be non-contiguous).
struct GradcheckResult {
  bool ok = true;
  double max_error = 0.0;  // the largest |analytic - numeric| - (atol + rtol * |numeric|), if positive
  std::string message;     // where the worst mismatch is, when !ok
};
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-6,
                          double rtol = 1e-4);

}  // namespace autograd
}  // namespace hwaro
