#pragma once
// Containers: Sequential (children applied in order) and ModuleList (children held, the
// caller decides how to use them). Children are named "0", "1", ... as in PyTorch.
#include <memory>
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
  std::shared_ptr<Module> operator[](std::size_t i) const;

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
  std::shared_ptr<Module> operator[](std::size_t i) const;
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> items_;
};
HWARO_MODULE(ModuleList);

}  // namespace hwaro::nn
