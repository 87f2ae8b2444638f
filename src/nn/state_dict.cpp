// StateDict: see hwaro/nn/state_dict.h.
#include "hwaro/nn/state_dict.h"

#include "hwaro/errors.h"

namespace hwaro::nn {

StateDict::StateDict(std::initializer_list<value_type> entries) {
  for (const auto& [name, tensor] : entries) (*this)[name] = tensor;
}

StateDict::StateDict(const std::map<std::string, Tensor>& by_name) {
  entries_.reserve(by_name.size());
  for (const auto& [name, tensor] : by_name) emplace(name, tensor);
}

StateDict::iterator StateDict::find(const std::string& name) {
  const auto it = index_.find(name);
  return it == index_.end() ? entries_.end() : entries_.begin() + static_cast<std::ptrdiff_t>(it->second);
}

StateDict::const_iterator StateDict::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? entries_.end() : entries_.begin() + static_cast<std::ptrdiff_t>(it->second);
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
  const auto [slot, added] = index_.try_emplace(name, entries_.size());
  if (added) entries_.emplace_back(std::move(name), std::move(tensor));
  return {entries_.begin() + static_cast<std::ptrdiff_t>(slot->second), added};
}

std::size_t StateDict::erase(const std::string& name) {
  const auto it = index_.find(name);
  if (it == index_.end()) return 0;
  // The names are const (as a map's keys), so the entries after it are rebuilt rather than moved down.
  std::vector<value_type> kept;
  kept.reserve(entries_.size() - 1);
  index_.clear();
  for (auto& [n, t] : entries_) {
    if (n == name) continue;
    index_.emplace(n, kept.size());
    kept.emplace_back(n, std::move(t));
  }
  entries_ = std::move(kept);
  return 1;
}

}  // namespace hwaro::nn
