// The models of `hwaro train` and `hwaro bench`. The MLP is the guide's model: flatten, two hidden
// ReLU layers, ten logits. It reaches about 88% on Fashion-MNIST in a few epochs of Adam.
// The CNN is two 3x3 convolutions (32 and 64 channels, padding 1), each with ReLU and a 2x2 max
// pool (28 -> 14 -> 7), then one linear layer to ten logits.
#include "models.h"

#include <functional>
#include <map>

#include "hwaro/errors.h"

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

std::shared_ptr<hw::nn::Module> make_mlp() {
  return hw::nn::Sequential(hw::nn::Flatten(), hw::nn::Linear(28 * 28, 256), hw::nn::ReLU(), hw::nn::Linear(256, 128),
                            hw::nn::ReLU(), hw::nn::Linear(128, 10))
      .ptr();
}

std::shared_ptr<hw::nn::Module> make_cnn() {
  namespace nn = hw::nn;
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Flatten(), nn::Linear(64 * 7 * 7, 10))
      .ptr();
}

const std::map<std::string, std::function<std::shared_ptr<hw::nn::Module>()>>& builders() {
  static const std::map<std::string, std::function<std::shared_ptr<hw::nn::Module>()>> table{{"mlp", make_mlp},
                                                                                             {"cnn", make_cnn}};
  return table;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& [name, build] : builders()) names.push_back(name);
  return names;
}

std::shared_ptr<hw::nn::Module> make_model(const std::string& name) {
  auto it = builders().find(name);
  if (it == builders().end()) {
    std::string known;
    for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
    throw hw::Error("unknown model '" + name + "'; the models are: " + known);
  }
  return it->second();
}

}  // namespace hwaro_cli
