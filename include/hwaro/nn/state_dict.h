#pragma once
// hw::nn::StateDict: tensors by dotted name ("encoder.fc1.weight") in insertion order, as the
// OrderedDict of PyTorch's state_dict(): Module::state_dict() fills it in PyTorch's order (each
// module's parameters, then its buffers, then its children's), so a printout or a loop over it
// reads as the model is built, and "layers.10" comes after "layers.9". It is built implicitly
// from the name-ordered std::map that hw::load returns, so
// model->load_state_dict(hw::load(path)) and hw::save(model->state_dict(), path) need no conversion.
#include <cstddef>
#include <initializer_list>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "hwaro/tensor.h"

namespace hwaro::nn {

// As std::map's (the type it replaced), adding a name invalidates no reference or iterator, and
// erasing one invalidates only those to the erased entry.
class StateDict {
 public:
  using value_type = std::pair<const std::string, Tensor>;
  using iterator = std::list<value_type>::iterator;
  using const_iterator = std::list<value_type>::const_iterator;

  StateDict() = default;
  // The index points into the entries, so a copy builds its own; a move takes the source's (a
  // list's nodes move with it) and leaves the source empty.
  StateDict(const StateDict& other);
  StateDict(StateDict&& other) noexcept;
  StateDict& operator=(const StateDict& other);
  StateDict& operator=(StateDict&& other) noexcept;
  ~StateDict() = default;
  // A repeated name keeps its first place and takes the last value, as a Python dict literal.
  StateDict(std::initializer_list<value_type> entries);
  StateDict(const std::map<std::string, Tensor>& by_name);  // NOLINT(google-explicit-constructor): hw::load's result

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

  iterator find(const std::string& name);
  const_iterator find(const std::string& name) const;
  std::size_t count(const std::string& name) const { return index_.count(name); }
  bool contains(const std::string& name) const { return index_.contains(name); }
  // hw::IndexError naming the key when there is none.
  Tensor& at(const std::string& name);
  const Tensor& at(const std::string& name) const;
  // The tensor under `name`, added last (undefined) when there is none.
  Tensor& operator[](const std::string& name);
  // Adds `name` last unless it is there; returns where it is and whether it was added.
  std::pair<iterator, bool> emplace(std::string name, Tensor tensor);
  // Removes `name`, keeping the others' order; returns how many were removed (0 or 1).
  std::size_t erase(const std::string& name);
  void clear() {
    index_.clear();
    entries_.clear();
  }

 private:
  void swap(StateDict& other) noexcept;

  std::list<value_type> entries_;  // the order
  std::unordered_map<std::string, iterator> index_;  // name -> its entry
};

}  // namespace hwaro::nn
