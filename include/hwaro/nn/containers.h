#pragma once
// Containers: Sequential (children applied in order), ModuleList (children held, the caller
// decides how to use them; named "0", "1", ... as in PyTorch) and ModuleDict (children by name,
// in insertion order). replace_module("2", ...) on one of them changes what forward() and
// indexing use, as PyTorch's model[2] = ... does.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hwaro/nn/module.h"

namespace hwaro::nn {

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <typename... Modules>
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())> void push_back(Holder holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override;  // each layer's clone_module(), in order
  std::size_t size() const { return layers_.size(); }
  std::shared_ptr<Module> operator[](std::int64_t i) const;  // -1 is the last, as in PyTorch

 protected:
  void child_replaced(const std::string& name, const std::shared_ptr<Module>& module) override;

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};
HWARO_MODULE(Sequential);

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <typename... Modules>
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())> void push_back(Holder holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  void push_back(std::shared_ptr<Module> module);
  std::shared_ptr<Module> clone_module() const override;  // each item's clone_module(), in order
  std::size_t size() const { return items_.size(); }
  std::shared_ptr<Module> operator[](std::int64_t i) const;  // -1 is the last, as in PyTorch
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 protected:
  void child_replaced(const std::string& name, const std::shared_ptr<Module>& module) override;

 private:
  std::vector<std::shared_ptr<Module>> items_;
};
HWARO_MODULE(ModuleList);

// LibTorch's ModuleDict: named children in insertion order (keys(), values(), items() and
// iteration follow it). insert() of a key already there replaces its module in its place, as
// PyTorch's dict assignment; a name must be a valid module name (non-empty, no '.').
class ModuleDictImpl : public Module {
 public:
  using Item = std::pair<std::string, std::shared_ptr<Module>>;
  ModuleDictImpl() = default;
  explicit ModuleDictImpl(const std::vector<Item>& items) { update(items); }

  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())>
  void insert(const std::string& key, Holder holder) {
    insert(key, std::static_pointer_cast<Module>(holder.ptr()));
  }
  void insert(const std::string& key, std::shared_ptr<Module> module);
  void update(const std::vector<Item>& items);  // insert() of each, in order
  bool contains(const std::string& key) const;
  // The module under key; a key not there is an hw::IndexError listing the keys.
  std::shared_ptr<Module> operator[](const std::string& key) const;
  std::vector<std::string> keys() const;
  std::vector<std::shared_ptr<Module>> values() const;
  const std::vector<Item>& items() const { return items_; }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  std::shared_ptr<Module> clone_module() const override;  // each item's clone_module(), same keys

 protected:
  void child_replaced(const std::string& name, const std::shared_ptr<Module>& module) override;

 private:
  std::size_t index_of(const std::string& key) const;  // size() where the key is not there
  std::vector<Item> items_;
};
HWARO_MODULE(ModuleDict);

}  // namespace hwaro::nn
