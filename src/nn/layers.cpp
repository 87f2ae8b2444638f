#include "hwaro/nn/layers.h"

#include <cmath>
#include <sstream>

#include "hwaro/nn/functional.h"
#include "hwaro/nn/init.h"
#include "hwaro/ops.h"

namespace hwaro::nn {

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

std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(start_) + ", end_dim=" + std::to_string(end_);
}

DropoutImpl::DropoutImpl(double p) : p_(p) {
  HWARO_CHECK(p >= 0.0 && p <= 1.0, "Dropout: probability has to be between 0 and 1, but got ", p);
}

Tensor DropoutImpl::forward(const Tensor& input) { return functional::dropout(input, p_, is_training()); }

std::string DropoutImpl::extra_repr() const {
  std::ostringstream s;
  s << "p=" << p_;
  return s.str();
}

}  // namespace hwaro::nn
