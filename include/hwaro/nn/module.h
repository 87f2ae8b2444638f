#pragma once
// hw::nn::Module: the base of every layer and of users' models (LibTorch's torch::nn::Module).
// A module owns named parameters, buffers and child modules, registered in its constructor:
//   struct Net : hw::nn::Module {
//     Net() { fc1 = register_module("fc1", hw::nn::Linear(784, 128)); }
//     hw::Tensor forward(const hw::Tensor& x) override { return fc1->forward(x).relu(); }
//     hw::nn::Linear fc1{nullptr};
//   };
// to(device) and to(dtype) move everything IN PLACE: a parameter keeps its identity, so an
// optimiser built before the move still updates the moved tensor. Only registered tensors move:
// for a module built through its holder (hw::nn::Linear(...), a HWARO_MODULE), to(device) and
// to(dtype) warn about each tensor the constructor created and kept without registering it, since
// that is the tensor that silently stays behind (on its device, or in its dtype).
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hwaro/nn/state_dict.h"
#include "hwaro/tensor.h"

namespace hwaro::nn {

class Module;

namespace detail {
// Opened by ModuleHolder around the construction of its module: remembers the tensors the
// constructor created and still holds at its end without having registered them, for to()'s
// warning. Tensors registered by any module built meanwhile (a replica, a child) do not count.
class ConstructionWatch {
 public:
  ConstructionWatch();
  ~ConstructionWatch();
  ConstructionWatch(const ConstructionWatch&) = delete;
  ConstructionWatch& operator=(const ConstructionWatch&) = delete;
  void finish(Module& module);
  // Called by register_parameter / register_buffer.
  static void note_registered(const Tensor& t);
  struct State;  // construction_watch.cpp

 private:
  std::unique_ptr<State> state_;
};
}  // namespace detail

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The type's name as printed ("Linear"); a user module may override it.
  virtual std::string name() const;
  // The module applied to one input. Modules whose forward takes other arguments leave this
  // and define their own; calling it then is a clear error.
  virtual Tensor forward(const Tensor& input);

  // ---- registration (in the constructor) ----
  Tensor& register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  // A buffer moves with to() and is listed by buffers(); a persistent one (the default) is also
  // saved by state_dict(), and a non-persistent one (PyTorch's persistent=False: a cache, a mask
  // the constructor rebuilds) is not, and load_state_dict neither expects nor accepts it.
  Tensor& register_buffer(const std::string& name, Tensor tensor, bool persistent = true);
  template <typename M> std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  // A holder (hw::nn::Linear, ...): registers its module and returns the holder.
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())>
  Holder register_module(const std::string& name, Holder holder) {
    add_child(name, holder.ptr());
    return holder;
  }

  // LibTorch's replace_module: the child registered as `name` becomes `module`, in its place (the
  // same position in children(), parameters() and state_dict()), e.g. a new classifier head for
  // fine-tuning. A member holder still holds the old child; assign the result to it:
  //   fc = replace_module("fc", hw::nn::Linear(512, 10));
  template <typename M> std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())>
  Holder replace_module(const std::string& name, Holder holder) {
    replace_child(name, holder.ptr());
    return holder;
  }

  // ---- what it holds ----
  // A tensor registered under several names (tied weights) is listed once, under its first name,
  // as PyTorch's remove_duplicate=True; state_dict() keeps every name.
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module and every descendant, depth first; a module registered in several places is
  // listed once, at its first place, as PyTorch's remove_duplicate=True.
  std::vector<std::shared_ptr<Module>> modules();
  // The same with each module's dotted path ("" for this one, "encoder", "encoder.fc1", ...).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  // fn on this module and each descendant, once each, in named_modules()'s order.
  void apply(const std::function<void(Module&)>& fn);

  // ---- modes, gradients, devices ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad(bool set_to_none = true);
  // PyTorch's requires_grad_: every parameter of the tree stops (false: frozen, for fine-tuning
  // a part of a model) or starts recording gradients. The parameters stay the same tensors.
  void requires_grad_(bool requires_grad = true);
  void to(Device device, bool non_blocking = false);
  void to(DType dtype);  // floating parameters and buffers only, as PyTorch
  void to(Device device, DType dtype, bool non_blocking = false);
  // The device of the first parameter (or buffer); CPU for a module with neither.
  Device device() const;

  // ---- checkpoints ----
  // Parameters and persistent buffers by dotted path, in PyTorch's order; what hw::save writes.
  StateDict state_dict() const;
  // strict: every key must match (hw::Error listing missing keys, unexpected keys and shape
  // mismatches); values are copied into the existing tensors, converted to their device/dtype.
  // Returns the keys that did not match, as PyTorch's _IncompatibleKeys: with strict = false,
  // what was left as it was and what the checkpoint had besides.
  struct IncompatibleKeys {
    std::vector<std::string> missing_keys, unexpected_keys;
  };
  IncompatibleKeys load_state_dict(const StateDict& state, bool strict = true);

  // The module tree, one line per module, as PyTorch prints it.
  std::string str() const;
  // This module's own line, e.g. "Linear(in_features=784, out_features=128, bias=true)".
  virtual std::string extra_repr() const { return ""; }

  // A new module of the same type and configuration, with its own (freshly initialised)
  // parameters and buffers: what DataParallel builds its replicas from. The layers and
  // containers of hwaro define it; the default returns nullptr ("not defined"), and a user
  // module may override it instead of being default-constructible or giving a factory.
  virtual std::shared_ptr<Module> clone_module() const { return nullptr; }

  // Where this module sits in the tree it was registered into ("encoder.fc1"; "" at the root).
  const std::string& path() const { return path_; }

 protected:
  // Throws hw::DeviceMismatchError, before any op runs, when input is not on the device of one
  // of this module's own parameters and buffers (the first such, in registration order): the
  // message names both devices, the module's path and the tensor ("fc2.bias is on cpu, input
  // is on cuda:0").
  void check_input_device(const Tensor& input) const;
  // Called after replace_module() has put `module` in the place of the child `name`: a container
  // that keeps its children in an order of its own (Sequential, ModuleList, ModuleDict) puts it
  // there too, so that forward() and indexing use it, as PyTorch's model[2] = nn.Linear(...) does.
  virtual void child_replaced(const std::string& /*name*/, const std::shared_ptr<Module>& /*module*/) {}

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> child);
  void replace_child(const std::string& name, std::shared_ptr<Module> child);
  void set_path(const std::string& path);
  void check_name(const std::string& name, const char* what) const;
  void print_tree(std::ostream& out, int indent) const;
  void collect(const std::string& prefix, bool recurse, bool buffers,
               std::vector<std::pair<std::string, Tensor>>& out) const;
  // What state_dict() holds, in PyTorch's order: each module's parameters, then its defined
  // persistent buffers, then its children's.
  void collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
  void move_tensors(const std::function<Tensor(const Tensor&)>& convert);
  // The warning of the header comment, for this module and its descendants: the move went to
  // device (when given) and to dtype (when given; it converts floating-point tensors only).
  void warn_about_unregistered(std::optional<Device> device, std::optional<DType> dtype) const;

  // Registration order is kept (it is the order of parameters() and of the printout).
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::string> non_persistent_buffers_;  // names in buffers_ that state_dict() leaves out
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::string path_;
  bool training_ = true;
  // Tensors the constructor kept without registering them (ConstructionWatch); weak, so that
  // one the module drops later is forgotten.
  std::vector<std::weak_ptr<TensorImpl>> unregistered_;
  mutable bool warned_unregistered_ = false;  // the warning is given once per module
  friend class detail::ConstructionWatch;
};

std::ostream& operator<<(std::ostream& out, const Module& module);

// LibTorch's holder: hw::nn::Linear(784, 128) makes a shared LinearImpl; `->` reaches it.
// A holder constructed from nullptr is empty until assigned (for members set in a constructor).
template <typename Impl> class ModuleHolder {
 public:
  using ImplType = Impl;
  ModuleHolder(std::nullptr_t) {}  // NOLINT: LibTorch's `Linear fc{nullptr}`
  // Builds a new Impl from args (not when the one argument is itself a holder: that copies).
  template <typename... Args>
    requires(!(sizeof...(Args) == 1 && (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> && ...)))
  explicit ModuleHolder(Args&&... args) : impl_(construct(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT: a holder of an existing module

  Impl* operator->() const { return checked(); }
  Impl& operator*() const { return *checked(); }
  Impl* get() const { return impl_.get(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }
  Tensor operator()(const Tensor& input) const { return checked()->forward(input); }

 private:
  template <typename... Args> static std::shared_ptr<Impl> construct(Args&&... args) {
    detail::ConstructionWatch watch;
    std::shared_ptr<Impl> impl = std::make_shared<Impl>(std::forward<Args>(args)...);
    watch.finish(*impl);
    return impl;
  }
  Impl* checked() const {
    HWARO_CHECK(impl_ != nullptr, "this module holder is empty (constructed from nullptr); assign it a module, "
                                  "usually with register_module() in the constructor");
    return impl_.get();
  }
  std::shared_ptr<Impl> impl_;
};

namespace detail {
// A module holder (hw::nn::Sequential, a HWARO_MODULE) or a std::shared_ptr to a module, as the
// std::shared_ptr<Module> that wrappers such as DataParallel keep.
template <typename Model> std::shared_ptr<Module> module_pointer_of(const Model& model) {
  if constexpr (requires { model.ptr(); }) {
    return model.ptr();
  } else {
    return model;
  }
}
}  // namespace detail

}  // namespace hwaro::nn

// Declares the holder `Name` of the module class `NameImpl`, as LibTorch's TORCH_MODULE.
#define HWARO_MODULE(Name)                                  \
  class Name : public ::hwaro::nn::ModuleHolder<Name##Impl> { \
   public:                                                  \
    using ::hwaro::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
