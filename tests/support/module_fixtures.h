#pragma once
// Small modules the nn tests share: an encoder with a bias-free layer and a buffer, and the
// names of a named_parameters()/named_buffers() list.
#include <string>
#include <utility>
#include <vector>

#include "hwaro/hwaro.h"

namespace hwaro::test {

struct EncoderImpl : nn::Module {
  EncoderImpl() {
    fc1 = register_module("fc1", nn::Linear(8, 6));
    fc2 = register_module("fc2", nn::Linear(6, 4, nn::LinearOptions{.bias = false}));
    register_buffer("running", zeros({4}));
  }
  Tensor forward(const Tensor& x) override { return fc2->forward(fc1->forward(x).relu()); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
HWARO_MODULE(Encoder);

inline std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [n, _] : named) out.push_back(n);
  return out;
}

}  // namespace hwaro::test
