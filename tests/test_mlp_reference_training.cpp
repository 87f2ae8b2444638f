// The acceptance test for training: a 784-512-256-10 MLP trained with SGD (momentum 0.9) on a
// synthetic separable problem follows, step by step, a float64 reference written out by hand here
// (forward, softmax cross-entropy, backward and the SGD update as plain loops, no hwaro op), from the
// same initial weights and batches; and it learns (the loss falls by more than half).
#include <cmath>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

constexpr int kIn = 784, kHidden1 = 512, kHidden2 = 256, kClasses = 10, kBatch = 64, kSteps = 20;
constexpr double kLr = 0.04, kMomentum = 0.9;

// A dense layer of the reference: y = x W^T + b, with its SGD momentum buffers.
struct RefLayer {
  int in, out;
  std::vector<double> w, b, grad_w, grad_b, buf_w, buf_b;
  RefLayer(int in_, int out_, std::vector<double> w_, std::vector<double> b_)
      : in(in_), out(out_), w(std::move(w_)), b(std::move(b_)), grad_w(w.size()), grad_b(b.size()),
        buf_w(w.size()), buf_b(b.size()) {}

  std::vector<double> forward(const std::vector<double>& x, int n) const {
    std::vector<double> y(static_cast<std::size_t>(n) * out);
    for (int r = 0; r < n; ++r) {
      for (int o = 0; o < out; ++o) {
        double s = b[o];
        for (int i = 0; i < in; ++i) s += x[r * in + i] * w[o * in + i];
        y[r * out + o] = s;
      }
    }
    return y;
  }
  // Sets the gradients from dL/dy and returns dL/dx.
  std::vector<double> backward(const std::vector<double>& x, const std::vector<double>& dy, int n) {
    std::fill(grad_w.begin(), grad_w.end(), 0.0);
    std::fill(grad_b.begin(), grad_b.end(), 0.0);
    std::vector<double> dx(static_cast<std::size_t>(n) * in);
    for (int r = 0; r < n; ++r) {
      for (int o = 0; o < out; ++o) {
        const double g = dy[r * out + o];
        grad_b[o] += g;
        for (int i = 0; i < in; ++i) {
          grad_w[o * in + i] += g * x[r * in + i];
          dx[r * in + i] += g * w[o * in + i];
        }
      }
    }
    return dx;
  }
  // torch.optim.SGD with momentum, no dampening: buf = momentum * buf + grad (buf = grad at step 1).
  void sgd_step(bool first) {
    auto update = [&](std::vector<double>& p, const std::vector<double>& g, std::vector<double>& buf) {
      for (std::size_t i = 0; i < p.size(); ++i) {
        buf[i] = first ? g[i] : kMomentum * buf[i] + g[i];
        p[i] -= kLr * buf[i];
      }
    };
    update(w, grad_w, buf_w);
    update(b, grad_b, buf_b);
  }
};

std::vector<double> relu(std::vector<double> v) {
  for (double& x : v) x = std::max(x, 0.0);
  return v;
}

void relu_backward(std::vector<double>& grad, const std::vector<double>& activation) {
  for (std::size_t i = 0; i < grad.size(); ++i) {
    if (activation[i] <= 0) grad[i] = 0;
  }
}

// One SGD step of the reference MLP; returns the batch's mean cross-entropy before the step.
double reference_step(std::vector<RefLayer>& layers, const std::vector<double>& x, const std::vector<std::int64_t>& y,
                      bool first) {
  const auto h1 = relu(layers[0].forward(x, kBatch));
  const auto h2 = relu(layers[1].forward(h1, kBatch));
  const auto z = layers[2].forward(h2, kBatch);
  double loss = 0;
  std::vector<double> dz(z.size());
  for (int r = 0; r < kBatch; ++r) {
    double m = -INFINITY;
    for (int c = 0; c < kClasses; ++c) m = std::max(m, z[r * kClasses + c]);
    double s = 0;
    for (int c = 0; c < kClasses; ++c) s += std::exp(z[r * kClasses + c] - m);
    loss += m + std::log(s) - z[r * kClasses + y[r]];
    for (int c = 0; c < kClasses; ++c) {
      dz[r * kClasses + c] = (std::exp(z[r * kClasses + c] - m) / s - (c == y[r] ? 1.0 : 0.0)) / kBatch;
    }
  }
  auto dh2 = layers[2].backward(h2, dz, kBatch);
  relu_backward(dh2, h2);
  auto dh1 = layers[1].backward(h1, dh2, kBatch);
  relu_backward(dh1, h1);
  layers[0].backward(x, dh1, kBatch);
  for (auto& layer : layers) layer.sgd_step(first);
  return loss / kBatch;
}

TEST(MlpReferenceTraining, SgdFollowsTheFloat64ReferenceStepByStepAndLearns) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  manual_seed(seed);

  // Ten classes, each a random +-1 pattern over the 784 inputs; a sample is its pattern plus noise.
  std::uniform_int_distribution<int> sign(0, 1);
  std::uniform_int_distribution<std::int64_t> label(0, kClasses - 1);
  std::normal_distribution<double> noise(0.0, 0.5);
  std::vector<double> centres(kClasses * kIn);
  for (double& c : centres) c = sign(rng) ? 0.5 : -0.5;

  nn::Sequential model(nn::Linear(kIn, kHidden1), nn::ReLU(), nn::Linear(kHidden1, kHidden2), nn::ReLU(),
                       nn::Linear(kHidden2, kClasses));
  const auto params = model->named_parameters();
  std::vector<RefLayer> reference;
  const int dims[] = {kIn, kHidden1, kHidden2, kClasses};
  for (int l = 0; l < 3; ++l) {
    reference.emplace_back(dims[l], dims[l + 1], values_of(params[2 * l].second), values_of(params[2 * l + 1].second));
  }
  optim::SGD sgd(model->parameters(), {.lr = kLr, .momentum = kMomentum});

  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<double> x(kBatch * kIn);
    std::vector<std::int64_t> y(kBatch);
    for (int r = 0; r < kBatch; ++r) {
      y[r] = label(rng);
      for (int i = 0; i < kIn; ++i) x[r * kIn + i] = centres[y[r] * kIn + i] + noise(rng);
    }
    std::vector<float> x32(x.begin(), x.end());
    for (int r = 0; r < kBatch; ++r) {  // the reference sees exactly the float32 inputs hwaro sees
      for (int i = 0; i < kIn; ++i) x[r * kIn + i] = x32[r * kIn + i];
    }
    const Tensor inputs = tensor(x32).reshape({kBatch, kIn});
    const Tensor loss = nn::functional::cross_entropy(model->forward(inputs), tensor(y));
    sgd.zero_grad();
    loss.backward();
    sgd.step();

    const double expected = reference_step(reference, x, y, step == 0);
    const double actual = loss.item<double>();
    EXPECT_NEAR(actual, expected, 1e-4 * std::max(1.0, std::abs(expected))) << "step " << step;
    losses.push_back(expected);
  }
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << "the reference itself did not learn: the problem is wrong";

  // After the last update the weights still agree with the reference's. Twenty momentum steps compound
  // float32 rounding (up to 1.5e-3 of the largest weight has been seen), so the bound is 1e-2 of it.
  const auto final_params = model->named_parameters();
  for (int l = 0; l < 3; ++l) {
    const auto w = values_of(final_params[2 * l].second);
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      worst = std::max(worst, std::abs(w[i] - reference[l].w[i]));
      scale = std::max(scale, std::abs(reference[l].w[i]));
    }
    EXPECT_LT(worst, 1e-2 * scale) << final_params[2 * l].first;
  }
}

}  // namespace
}  // namespace hwaro::test
