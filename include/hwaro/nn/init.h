#pragma once
// hw::nn::init: in-place initialisers with torch.nn.init's names and formulas. They run
// without recording a graph, so they may be applied to parameters.
#include <string>
#include <utility>

#include "hwaro/generator.h"
#include "hwaro/tensor.h"

namespace hwaro::nn::init {

enum class FanMode { FanIn, FanOut };

// (fan_in, fan_out) of a weight: [out, in] for Linear, [out, in, kh, kw] for Conv (times kh*kw).
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& weight);
// torch.nn.init.calculate_gain for "linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu".
double calculate_gain(const std::string& nonlinearity, double param = 0.01);

Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* generator = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);
Tensor& constant_(Tensor& t, double value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0, Generator* generator = nullptr);
Tensor& xavier_normal_(Tensor& t, double gain = 1.0, Generator* generator = nullptr);
// a: the negative slope of the rectifier after this layer (PyTorch's Linear and Conv use sqrt(5)).
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                         const std::string& nonlinearity = "leaky_relu", Generator* generator = nullptr);
Tensor& kaiming_normal_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                        const std::string& nonlinearity = "leaky_relu", Generator* generator = nullptr);

}  // namespace hwaro::nn::init
