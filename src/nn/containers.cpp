#include "hwaro/nn/containers.h"

#include <charconv>
#include <sstream>
#include <system_error>

#include "hwaro/errors.h"

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

namespace {
// As PyTorch's _get_abs_string_index: an index in [-size, size), a negative one counted from the end.
std::size_t absolute_index(std::int64_t i, std::size_t size, const char* container) {
  const auto n = static_cast<std::int64_t>(size);
  HWARO_CHECK_AS(IndexError, i >= -n && i < n, container, ": index ", i, " is out of range for ", size, " modules");
  return static_cast<std::size_t>(i < 0 ? i + n : i);
}
}  // namespace

std::shared_ptr<Module> SequentialImpl::operator[](std::int64_t i) const {
  return layers_[absolute_index(i, layers_.size(), "Sequential")];
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

std::shared_ptr<Module> ModuleListImpl::operator[](std::int64_t i) const {
  return items_[absolute_index(i, items_.size(), "ModuleList")];
}

std::size_t ModuleDictImpl::index_of(const std::string& key) const {
  std::size_t i = 0;
  while (i < items_.size() && items_[i].first != key) ++i;
  return i;
}

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  HWARO_CHECK(module != nullptr, "ModuleDict: '", key, "' is an empty module");
  if (contains(key)) {
    replace_module(key, std::move(module));  // child_replaced puts it in its place in items_
    return;
  }
  register_module(key, module);
  items_.emplace_back(key, std::move(module));
}

void ModuleDictImpl::update(const std::vector<Item>& items) {
  for (const auto& [key, module] : items) insert(key, module);
}

bool ModuleDictImpl::contains(const std::string& key) const { return index_of(key) < items_.size(); }

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  if (const std::size_t i = index_of(key); i < items_.size()) return items_[i].second;
  std::ostringstream known;
  for (std::size_t i = 0; i < items_.size(); ++i) known << (i ? ", " : "") << "'" << items_[i].first << "'";
  throw IndexError("ModuleDict: no module '" + key + "'; the keys are " +
                   (items_.empty() ? std::string("none (the dict is empty)") : known.str()));
}

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, _] : items_) out.push_back(k);
  return out;
}

std::vector<std::shared_ptr<Module>> ModuleDictImpl::values() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [_, module] : items_) out.push_back(module);
  return out;
}

std::shared_ptr<Module> ModuleDictImpl::clone_module() const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& [key, module] : items_) copy->insert(key, module->clone_module());
  return copy;
}

namespace {
// The position that push_back named the child `name` after, or `size` where it names none (a child
// registered under another name by hand is not one of the container's items).
std::size_t position_named(const std::string& name, std::size_t size) {
  std::size_t i = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), i);
  return error == std::errc() && end == name.data() + name.size() && i < size ? i : size;
}
}  // namespace

void SequentialImpl::child_replaced(const std::string& name, const std::shared_ptr<Module>& module) {
  if (const std::size_t i = position_named(name, layers_.size()); i < layers_.size()) layers_[i] = module;
}

void ModuleListImpl::child_replaced(const std::string& name, const std::shared_ptr<Module>& module) {
  if (const std::size_t i = position_named(name, items_.size()); i < items_.size()) items_[i] = module;
}

void ModuleDictImpl::child_replaced(const std::string& name, const std::shared_ptr<Module>& module) {
  if (const std::size_t i = index_of(name); i < items_.size()) items_[i].second = module;
}

}  // namespace hwaro::nn
