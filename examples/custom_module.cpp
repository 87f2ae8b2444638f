// Guide §3.2, "Your own module": derive from hw::nn::Module, register the layers it holds
// with register_module and its own tensors with register_parameter (trained) or
// register_buffer (moved and saved, not trained), then ->to(device) moves all of them, in
// place, like the built-in layers.
//
//   PyTorch:  class Net(nn.Module): def __init__(self): self.fc = nn.Linear(...);
//             self.scale = nn.Parameter(torch.ones(n)); self.register_buffer("calls", ...)
#include <hwaro/hwaro.h>

#include <cmath>
#include <iostream>

namespace hw = hwaro;
namespace F = hw::nn::functional;

// A small residual MLP: out = W3 (h + scale * relu(W2 h + b2)) + b3, with h = relu(W1 x + b1).
class ResidualMLPImpl : public hw::nn::Module {
 public:
  ResidualMLPImpl(std::int64_t in, std::int64_t hidden, std::int64_t out) {
    input = register_module("input", hw::nn::Linear(in, hidden));
    block = register_module("block", hw::nn::Linear(hidden, hidden));
    output = register_module("output", hw::nn::Linear(hidden, out));
    // A learnable gain per feature of the residual branch: a parameter the module owns itself.
    scale = register_parameter("scale", hw::full({hidden}, 0.5));
    // How many samples went through forward in training: state, but not something to train.
    samples_seen = register_buffer("samples_seen", hw::zeros({}, {.dtype = hw::kInt64}));
  }

  std::string name() const override { return "ResidualMLP"; }

  hw::Tensor forward(const hw::Tensor& x) override {
    check_input_device(x);  // a clear error naming both devices and the tensor (scale) if x is elsewhere
    if (is_training()) samples_seen.add_(x.size(0));
    const hw::Tensor h = input->forward(x).relu();
    return output->forward(h + scale * block->forward(h).relu());
  }

  hw::nn::Linear input{nullptr}, block{nullptr}, output{nullptr};
  hw::Tensor scale, samples_seen;
};
HWARO_MODULE(ResidualMLP);

namespace {

// The module's formula written out in float64 on the CPU, from its own parameters.
hw::Tensor reference_forward(ResidualMLPImpl& m, const hw::Tensor& x) {
  auto f64 = [](const hw::Tensor& t) { return t.detach().cpu().to(hw::kFloat64); };
  const hw::Tensor h = F::linear(f64(x), f64(m.input->weight), f64(m.input->bias)).relu();
  const hw::Tensor r = F::linear(h, f64(m.block->weight), f64(m.block->bias)).relu();
  return F::linear(h + f64(m.scale) * r, f64(m.output->weight), f64(m.output->bias));
}

}  // namespace

int main() {
  hw::manual_seed(0);
  const hw::Device device = hw::default_device();
  auto model = ResidualMLP(16, 32, 4);
  std::cout << *model << "\n";

  // Build the optimiser first, then move: parameters keep their identity, so it still trains them.
  hw::optim::SGD optimizer(model->parameters(), {.lr = 0.1});
  model->to(device);
  std::cout << "after ->to(" << device << "):\n";
  // A tensor's device always has an index (cuda:0), default_device() may not ("cuda": the
  // current GPU), so compare the kind of device, as PyTorch users compare `p.device.type`.
  bool all_moved = true;
  for (const auto& [name, p] : model->named_parameters()) {
    std::cout << "  parameter " << name << " " << p.sizes() << " on " << p.device() << "\n";
    all_moved = all_moved && p.device().type() == device.type();
  }
  for (const auto& [name, b] : model->named_buffers()) {
    std::cout << "  buffer    " << name << " " << b.sizes() << " on " << b.device() << "\n";
    all_moved = all_moved && b.device().type() == device.type();
  }

  // One training step on a batch moved to the model's device.
  const hw::Tensor x = hw::randn({8, 16}).to(device);
  const hw::Tensor target = hw::randint(0, 4, {8}).to(device);
  const hw::Tensor scale_before = model->scale.detach().cpu().clone();
  hw::Tensor loss = F::cross_entropy(model->forward(x), target);
  optimizer.zero_grad();
  loss.backward();
  optimizer.step();
  const double scale_change = (model->scale.detach().cpu() - scale_before).abs().max().item<float>();
  std::cout << "loss " << loss.item<float>() << "; the registered parameter 'scale' moved by up to " << scale_change
            << "; samples_seen = " << model->samples_seen.item<std::int64_t>() << "\n";

  // The example's check: forward agrees with the formula computed in float64.
  model->eval();
  hw::NoGradGuard no_grad;
  const hw::Tensor probe = hw::randn({5, 16});
  const double error =
      (model->forward(probe.to(device)).cpu().to(hw::kFloat64) - reference_forward(*model, probe)).abs().max().item<double>();
  const bool ok = all_moved && scale_change > 0 && model->samples_seen.item<std::int64_t>() == 8 && error < 1e-4;
  if (!ok) {
    std::cout << "FAILED: moved " << all_moved << ", scale change " << scale_change << ", error " << error << "\n";
    return 1;
  }
  std::cout << "custom module OK on " << device << ": every parameter and buffer moved, 'scale' trained, forward "
            << "matches the float64 formula to " << error << "\n";
  return 0;
}
