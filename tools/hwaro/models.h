#pragma once
// The models `hwaro train` and `hwaro bench` use, for 28x28 one-channel images and 10 classes
// (MNIST, Fashion-MNIST), built from hwaro's own layers.
#include <memory>
#include <string>
#include <vector>

#include "hwaro/nn.h"

namespace hwaro_cli {

// "mlp" or "cnn"; another name is an hw::Error listing model_names().
std::shared_ptr<hwaro::nn::Module> make_model(const std::string& name);
std::vector<std::string> model_names();

}  // namespace hwaro_cli
