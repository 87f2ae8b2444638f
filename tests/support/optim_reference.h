#pragma once
// torch.optim's update rules in float64, one loop per element, that the optimiser tests compare with:
// given a parameter's starting values and each step's gradient, the values after every step.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace hwaro::test {

using StepGradients = std::vector<std::vector<double>>;  // [step][element]

struct SgdRule {
  double lr;
  double momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

// torch.optim.SGD: the momentum buffer starts as the first gradient, undamped.
inline std::vector<std::vector<double>> sgd_steps(std::vector<double> p, const StepGradients& grads, const SgdRule& r) {
  std::vector<double> buf(p.size());
  std::vector<std::vector<double>> out;
  for (std::size_t t = 0; t < grads.size(); ++t) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double g = (r.maximize ? -grads[t][i] : grads[t][i]) + r.weight_decay * p[i];
      if (r.momentum != 0) {
        buf[i] = t == 0 ? g : r.momentum * buf[i] + (1 - r.dampening) * g;
        g = r.nesterov ? g + r.momentum * buf[i] : buf[i];
      }
      p[i] -= r.lr * g;
    }
    out.push_back(p);
  }
  return out;
}

struct AdamRule {
  double lr;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled = false;  // AdamW: the decay multiplies the parameter instead of joining the gradient
  bool amsgrad = false, maximize = false;
};

// torch.optim.Adam, or AdamW when decoupled.
inline std::vector<std::vector<double>> adam_steps(std::vector<double> p, const StepGradients& grads, const AdamRule& r) {
  std::vector<double> m(p.size()), v(p.size()), vmax(p.size());
  std::vector<std::vector<double>> out;
  for (std::size_t step = 1; step <= grads.size(); ++step) {
    const double t = static_cast<double>(step);
    for (std::size_t i = 0; i < p.size(); ++i) {
      double g = r.maximize ? -grads[step - 1][i] : grads[step - 1][i];
      if (r.decoupled) {
        p[i] *= 1 - r.lr * r.weight_decay;
      } else {
        g += r.weight_decay * p[i];
      }
      m[i] = r.beta1 * m[i] + (1 - r.beta1) * g;
      v[i] = r.beta2 * v[i] + (1 - r.beta2) * g * g;
      vmax[i] = std::max(vmax[i], v[i]);
      const double second = r.amsgrad ? vmax[i] : v[i];
      const double mhat = m[i] / (1 - std::pow(r.beta1, t));
      p[i] -= r.lr * mhat / (std::sqrt(second / (1 - std::pow(r.beta2, t))) + r.eps);
    }
    out.push_back(p);
  }
  return out;
}

// The values after the last step (the start when there are no steps).
inline std::vector<double> final_values(const std::vector<double>& start, const std::vector<std::vector<double>>& steps) {
  return steps.empty() ? start : steps.back();
}

}  // namespace hwaro::test
