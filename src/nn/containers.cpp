#include "hwaro/nn/containers.h"

namespace hwaro::nn {

void SequentialImpl::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(layers_.size()), module);
  layers_.push_back(std::move(module));
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& layer : layers_) x = layer->forward(x);
  return x;
}

std::shared_ptr<Module> SequentialImpl::clone_module() const {
  auto copy = std::make_shared<SequentialImpl>();
  for (const auto& layer : layers_) copy->push_back(layer->clone_module());
  return copy;
}

std::shared_ptr<Module> SequentialImpl::operator[](std::size_t i) const {
  HWARO_CHECK(i < layers_.size(), "Sequential: index ", i, " is out of range for ", layers_.size(), " modules");
  return layers_[i];
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleListImpl::clone_module() const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& item : items_) copy->push_back(item->clone_module());
  return copy;
}

std::shared_ptr<Module> ModuleListImpl::operator[](std::size_t i) const {
  HWARO_CHECK(i < items_.size(), "ModuleList: index ", i, " is out of range for ", items_.size(), " modules");
  return items_[i];
}

}  // namespace hwaro::nn
