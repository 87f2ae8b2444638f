// StateDict: see hwaro/nn/state_dict.h.
#include "hwaro/nn/state_dict.h"

#include <iterator>

#include "hwaro/errors.h"

namespace hwaro::nn {

StateDict::StateDict(std::initializer_list<value_type> entries) {
  for (const auto& [name, tensor] : entries) (*this)[name] = tensor;
}

StateDict::StateDict(const std::map<std::string, Tensor>& by_name) {
  for (const auto& [name, tensor] : by_name) emplace(name, tensor);
}

StateDict::StateDict(const StateDict& other) {
  for (const auto& [name, tensor] : other) emplace(name, tensor);
}

StateDict::StateDict(StateDict&& other) noexcept { swap(other); }

StateDict& StateDict::operator=(const StateDict& other) {
  if (this != &other) {
    StateDict copy(other);
    swap(copy);
  }
  return *this;
}

StateDict& StateDict::operator=(StateDict&& other) noexcept {
  if (this != &other) {
    StateDict taken;
    taken.swap(other);  // other is left empty
    swap(taken);
  }
  return *this;
}

// A swap keeps every list iterator valid (now into the other dict), so each index still fits its list.
void StateDict::swap(StateDict& other) noexcept {
  entries_.swap(other.entries_);
  index_.swap(other.index_);
}

StateDict::iterator StateDict::find(const std::string& name) {
  const auto it = index_.find(name);
  return it == index_.end() ? entries_.end() : it->second;
}

StateDict::const_iterator StateDict::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? entries_.end() : const_iterator(it->second);
}

Tensor& StateDict::at(const std::string& name) {
  const auto it = find(name);
  HWARO_CHECK_AS(IndexError, it != entries_.end(), "StateDict: no tensor named '", name, "'");
  return it->second;
}

const Tensor& StateDict::at(const std::string& name) const {
  const auto it = find(name);
  HWARO_CHECK_AS(IndexError, it != entries_.end(), "StateDict: no tensor named '", name, "'");
  return it->second;
}

Tensor& StateDict::operator[](const std::string& name) { return emplace(name, Tensor()).first->second; }

std::pair<StateDict::iterator, bool> StateDict::emplace(std::string name, Tensor tensor) {
  if (const auto it = index_.find(name); it != index_.end()) return {it->second, false};
  entries_.emplace_back(name, std::move(tensor));
  const auto added = std::prev(entries_.end());
  try {
    index_.emplace(std::move(name), added);
  } catch (...) {
    entries_.pop_back();
    throw;
  }
  return {added, true};
}

std::size_t StateDict::erase(const std::string& name) {
  const auto it = index_.find(name);
  if (it == index_.end()) return 0;
  entries_.erase(it->second);
  index_.erase(it);
  return 1;
}

}  // namespace hwaro::nn
