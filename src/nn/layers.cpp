#include "hwaro/nn/layers.h"

#include <cmath>
#include <sstream>

#include "hwaro/nn/functional.h"
#include "hwaro/nn/init.h"
#include "hwaro/ops.h"

namespace hwaro::nn {
namespace {

// A double as a module's printout shows it ("0.01", "20").
std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

LinearImpl::LinearImpl(std::int64_t in, std::int64_t out, LinearOptions options)
    : in_features(in), out_features(out) {
  HWARO_CHECK(in > 0 && out > 0, "Linear: in_features and out_features must be positive, got ", in, " and ", out);
  weight = register_parameter("weight", empty({out, in}));
  if (options.bias) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  check_input_device(input);
  return functional::linear(input, weight, bias);
}

std::string LinearImpl::extra_repr() const {
  std::ostringstream s;
  s << "in_features=" << in_features << ", out_features=" << out_features << ", bias=" << (bias.defined() ? "true" : "false");
  return s.str();
}

Tensor LeakyReLUImpl::forward(const Tensor& input) { return functional::leaky_relu(input, negative_slope_); }
std::string LeakyReLUImpl::extra_repr() const { return "negative_slope=" + number_text(negative_slope_); }

Tensor ELUImpl::forward(const Tensor& input) { return functional::elu(input, alpha_); }
std::string ELUImpl::extra_repr() const { return "alpha=" + number_text(alpha_); }

Tensor SELUImpl::forward(const Tensor& input) { return functional::selu(input); }

SoftplusImpl::SoftplusImpl(double beta, double threshold) : beta_(beta), threshold_(threshold) {
  HWARO_CHECK(beta != 0.0, "Softplus: beta must not be 0");
}
Tensor SoftplusImpl::forward(const Tensor& input) { return functional::softplus(input, beta_, threshold_); }
std::string SoftplusImpl::extra_repr() const {
  return "beta=" + number_text(beta_) + ", threshold=" + number_text(threshold_);
}

HardtanhImpl::HardtanhImpl(double min_val, double max_val) : min_val_(min_val), max_val_(max_val) {
  HWARO_CHECK(min_val <= max_val, "Hardtanh: min_val (", min_val, ") must not be greater than max_val (", max_val, ")");
}
Tensor HardtanhImpl::forward(const Tensor& input) { return functional::hardtanh(input, min_val_, max_val_); }
std::string HardtanhImpl::extra_repr() const {
  return "min_val=" + number_text(min_val_) + ", max_val=" + number_text(max_val_);
}

Tensor ReLU6Impl::forward(const Tensor& input) { return functional::relu6(input); }
Tensor HardsigmoidImpl::forward(const Tensor& input) { return functional::hardsigmoid(input); }
Tensor HardswishImpl::forward(const Tensor& input) { return functional::hardswish(input); }
Tensor MishImpl::forward(const Tensor& input) { return functional::mish(input); }
Tensor LogSigmoidImpl::forward(const Tensor& input) { return functional::logsigmoid(input); }

std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(start_) + ", end_dim=" + std::to_string(end_);
}

DropoutImpl::DropoutImpl(double p) : p_(p) {
  HWARO_CHECK(p >= 0.0 && p <= 1.0, "Dropout: probability has to be between 0 and 1, but got ", p);
}

Tensor DropoutImpl::forward(const Tensor& input) { return functional::dropout(input, p_, is_training()); }

std::string DropoutImpl::extra_repr() const { return "p=" + number_text(p_); }

}  // namespace hwaro::nn
