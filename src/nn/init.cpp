#include "hwaro/nn/init.h"

#include <cmath>

#include "hwaro/autograd.h"
#include "hwaro/ops.h"

namespace hwaro::nn::init {

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& weight) {
  HWARO_CHECK(weight.dim() >= 2, "fan in and fan out can not be computed for a tensor with fewer than 2 dimensions ",
              "(shape ", weight.sizes(), ")");
  std::int64_t receptive = 1;
  for (std::int64_t d = 2; d < weight.dim(); ++d) receptive *= weight.size(d);
  return {weight.size(1) * receptive, weight.size(0) * receptive};
}

double calculate_gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" || nonlinearity == "sigmoid") {
    return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  HWARO_CHECK(false, "calculate_gain: unsupported nonlinearity '", nonlinearity,
              "'; use linear, conv2d, sigmoid, tanh, relu, leaky_relu or selu");
  return 0.0;
}

Tensor& uniform_(Tensor& t, double low, double high, Generator* generator) {
  NoGradGuard no_grad;
  t.copy_(rand(t.sizes(), {.dtype = t.dtype(), .device = t.device()}, generator) * (high - low) + low);
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* generator) {
  NoGradGuard no_grad;
  t.copy_(randn(t.sizes(), {.dtype = t.dtype(), .device = t.device()}, generator) * std + mean);
  return t;
}

Tensor& constant_(Tensor& t, double value) {
  NoGradGuard no_grad;
  t.fill_(value);
  return t;
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

Tensor& xavier_uniform_(Tensor& t, double gain, Generator* generator) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(t, -bound, bound, generator);
}

Tensor& xavier_normal_(Tensor& t, double gain, Generator* generator) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)), generator);
}

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, const std::string& nonlinearity) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const std::int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
  HWARO_CHECK(fan > 0, "kaiming initialisation of a tensor with zero elements (shape ", t.sizes(), ")");
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor& kaiming_uniform_(Tensor& t, double a, FanMode mode, const std::string& nonlinearity, Generator* generator) {
  const double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nonlinearity);
  return uniform_(t, -bound, bound, generator);
}

Tensor& kaiming_normal_(Tensor& t, double a, FanMode mode, const std::string& nonlinearity, Generator* generator) {
  return normal_(t, 0.0, kaiming_std(t, a, mode, nonlinearity), generator);
}

}  // namespace hwaro::nn::init
