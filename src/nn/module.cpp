// Module: registration, traversal, modes, in-place moves, state dicts and the printout.
#include "hwaro/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "hwaro/autograd.h"
#include "hwaro/errors.h"
#include "hwaro/ops.h"

namespace hwaro::nn {

std::string Module::name() const {
  // The class name without namespaces or LibTorch's "Impl" suffix ("hwaro::nn::LinearImpl" -> "Linear").
  int status = 0;
  char* demangled = abi::__cxa_demangle(typeid(*this).name(), nullptr, nullptr, &status);
  std::string full = status == 0 && demangled != nullptr ? demangled : typeid(*this).name();
  std::free(demangled);
  const std::size_t colon = full.rfind("::");
  if (colon != std::string::npos) full = full.substr(colon + 2);
  if (full.size() > 4 && full.compare(full.size() - 4, 4, "Impl") == 0) full.resize(full.size() - 4);
  return full;
}

Tensor Module::forward(const Tensor&) {
  HWARO_CHECK(false, name(), " (at '", path_.empty() ? "<root>" : path_, "') has no forward(const Tensor&); ",
              "call the forward it defines");
  return {};
}

void Module::check_name(const std::string& name, const char* what) const {
  HWARO_CHECK(!name.empty() && name.find('.') == std::string::npos, "register_", what, ": the name '", name,
              "' must be non-empty and contain no '.'");
  auto taken = [&](const auto& list) {
    for (const auto& [n, _] : list) {
      if (n == name) return true;
    }
    return false;
  };
  HWARO_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_), "register_", what, ": '", name,
              "' is already registered in ", this->name());
}

Tensor& Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_name(name, "parameter");
  HWARO_CHECK(tensor.defined(), "register_parameter: '", name, "' is an undefined tensor");
  HWARO_CHECK(tensor.is_leaf(), "register_parameter: '", name, "' was computed from other tensors (it has a ",
              "grad_fn); a parameter must be a leaf: pass t.detach()");
  // requires_grad is what the parameter ends with (false freezes a tensor that required gradients);
  // an integer parameter cannot require them and is kept as it is.
  if (tensor.is_floating_point() || !requires_grad) tensor.set_requires_grad(requires_grad);
  detail::ConstructionWatch::note_registered(tensor);
  parameters_.emplace_back(name, std::move(tensor));
  return parameters_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor tensor, bool persistent) {
  check_name(name, "buffer");
  detail::ConstructionWatch::note_registered(tensor);
  if (!persistent) non_persistent_buffers_.push_back(name);
  buffers_.emplace_back(name, std::move(tensor));
  return buffers_.back().second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> child) {
  check_name(name, "module");
  HWARO_CHECK(child != nullptr, "register_module: '", name, "' is an empty module");
  child->set_path(path_.empty() ? name : path_ + "." + name);
  children_.emplace_back(name, std::move(child));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> child) {
  HWARO_CHECK(child != nullptr, "replace_module: '", name, "' is an empty module");
  for (auto& [n, current] : children_) {
    if (n != name) continue;
    child->set_path(path_.empty() ? name : path_ + "." + name);
    current = std::move(child);
    child_replaced(name, current);
    return;
  }
  HWARO_CHECK(false, "replace_module: ", this->name(), " has no child module '", name,
              "'; register it with register_module first");
}

void Module::set_path(const std::string& path) {
  path_ = path;
  for (auto& [n, child] : children_) child->set_path(path + "." + n);
}

void Module::collect(const std::string& prefix, bool recurse, bool buffers,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [n, t] : buffers ? buffers_ : parameters_) out.emplace_back(prefix + n, t);
  if (!recurse) return;
  for (const auto& [n, child] : children_) child->collect(prefix + n + ".", true, buffers, out);
}

void Module::collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [n, t] : parameters_) out.emplace_back(prefix + n, t);
  for (const auto& [n, t] : buffers_) {
    if (t.defined() && std::find(non_persistent_buffers_.begin(), non_persistent_buffers_.end(), n) ==
                           non_persistent_buffers_.end()) {
      out.emplace_back(prefix + n, t);
    }
  }
  for (const auto& [n, child] : children_) child->collect_state(prefix + n + ".", out);
}

namespace {
// A tensor registered under several names (tied weights) is kept under its first one only, and an
// undefined one (PyTorch's None) not at all, as PyTorch's named_parameters()/named_buffers().
std::vector<std::pair<std::string, Tensor>> without_duplicates(std::vector<std::pair<std::string, Tensor>> named) {
  std::set<const TensorImpl*> seen;
  std::erase_if(named,
                [&](const auto& entry) { return !entry.second.defined() || !seen.insert(entry.second.impl()).second; });
  return named;
}
}  // namespace

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, false, out);
  return without_duplicates(std::move(out));
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, true, out);
  return without_duplicates(std::move(out));
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [_, child] : children_) out.push_back(child);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [_, m] : named_modules()) out.push_back(std::move(m));
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::shared_ptr<Module> self = weak_from_this().lock();
  HWARO_CHECK(self != nullptr, "modules()/named_modules(): this ", name(), " is not held by a std::shared_ptr, so it cannot be ",
              "listed as one; build it with std::make_shared<", name(), ">() or its holder (hw::nn::", name(),
              "(...)), or use children() or apply()");
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out{{"", std::move(self)}};
  std::set<const Module*> seen{this};
  // Pre-order (a module, then its subtree), children in registration order, as PyTorch's.
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& parent, const std::string& prefix) {
    for (const auto& [n, child] : parent.children_) {
      if (!seen.insert(child.get()).second) continue;
      out.emplace_back(prefix + n, child);
      walk(*child, prefix + n + ".");
    }
  };
  walk(*this, "");
  return out;
}

// Each module once, in named_modules()'s order, also one registered in several places.
void Module::apply(const std::function<void(Module&)>& fn) {
  std::set<const Module*> seen{this};
  std::function<void(Module&)> walk = [&](Module& m) {
    fn(m);
    for (auto& [_, child] : m.children_) {
      if (seen.insert(child.get()).second) walk(*child);
    }
  };
  walk(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

// An integer parameter cannot require gradients and is left as it is, as register_parameter leaves it.
void Module::requires_grad_(bool requires_grad) {
  for (Tensor& p : parameters()) {
    if (p.is_floating_point() || !requires_grad) p.set_requires_grad(requires_grad);
  }
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      g.zero_();
    }
  }
}

void Module::move_tensors(const std::function<Tensor(const Tensor&)>& convert) {
  NoGradGuard no_grad;
  for (auto& [_, p] : parameters_) {
    p.set_data(convert(p));
    // PyTorch's Module._apply moves gradients along with their parameters.
    if (p.grad().defined()) p.mutable_grad() = convert(p.grad());
  }
  for (auto& [_, b] : buffers_) {
    if (b.defined()) b.set_data(convert(b));
  }
  for (auto& [_, child] : children_) child->move_tensors(convert);
}

void Module::to(Device device, bool non_blocking) {
  move_tensors([&](const Tensor& t) { return t.to(device, non_blocking); });
  warn_about_unregistered(device, std::nullopt);
}

namespace {
// As PyTorch's: checked before anything moves, so a refused call leaves the module as it was.
void check_module_dtype(DType dtype) {
  HWARO_CHECK(is_floating_point(dtype), "Module::to(dtype) only accepts floating point dtypes, got ", dtype);
}
}  // namespace

void Module::to(DType dtype) {
  check_module_dtype(dtype);
  move_tensors([&](const Tensor& t) { return t.is_floating_point() ? t.to(dtype) : t; });
  warn_about_unregistered(std::nullopt, dtype);
}

void Module::to(Device device, DType dtype, bool non_blocking) {
  check_module_dtype(dtype);
  move_tensors([&](const Tensor& t) { return t.is_floating_point() ? t.to(device, dtype, non_blocking) : t.to(device, non_blocking); });
  warn_about_unregistered(device, dtype);
}

Device Module::device() const {
  for (auto& [_, t] : named_parameters()) return t.device();
  for (auto& [_, t] : named_buffers()) return t.device();
  return Device(DeviceType::CPU);
}

void Module::check_input_device(const Tensor& input) const {
  const auto check = [&](const std::string& name, const Tensor& t) {
    if (!t.defined() || t.device() == input.device()) return;
    const std::string where = path_.empty() ? name : path_ + "." + name;
    std::ostringstream msg;
    msg << "Expected all tensors to be on the same device, but found at least two devices, " << input.device()
        << " and " << t.device() << "! (in the forward of " << this->name() << " '" << (path_.empty() ? "<root>" : path_)
        << "': " << where << " is on " << t.device() << ", input is on " << input.device()
        << "; move the model with model->to(device) and every batch with batch.to(device))";
    throw DeviceMismatchError(msg.str());
  };
  for (const auto& [name, t] : parameters_) check(name, t);
  for (const auto& [name, t] : buffers_) check(name, t);
}

// The state dict names a tied tensor under every name it was registered with, as PyTorch's.
StateDict Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> own;
  collect_state("", own);
  StateDict out;
  for (auto& [n, t] : own) out.emplace(n, t.detach());  // a tied tensor: each name once, as registered
  return out;
}

Module::IncompatibleKeys Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, Tensor>> own;
  collect_state("", own);
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string> known;
  for (const auto& [n, t] : own) {
    known.insert(n);
    auto it = state.find(n);
    if (it == state.end()) {
      missing.push_back(n);
    } else if (!it->second.defined() || it->second.sizes() != t.sizes()) {
      std::ostringstream m;
      m << n << ": checkpoint ";
      if (it->second.defined()) {
        m << it->second.sizes();
      } else {
        m << "undefined";
      }
      m << ", model " << t.sizes();
      mismatched.push_back(m.str());
    }
  }
  for (const auto& [n, _] : state) {
    if (!known.count(n)) unexpected.push_back(n);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("none") : s;
  };
  HWARO_CHECK(mismatched.empty() && (!strict || (missing.empty() && unexpected.empty())),
              "load_state_dict: the checkpoint does not match ", name(), ". Missing keys: ", list(missing),
              ". Unexpected keys: ", list(unexpected), ". Shape mismatches: ", list(mismatched),
              strict ? ". (strict=false ignores missing and unexpected keys, not shape mismatches)" : ".");
  NoGradGuard no_grad;
  for (auto& [n, t] : own) {
    auto it = state.find(n);
    if (it != state.end()) t.copy_(it->second);
  }
  return {std::move(missing), std::move(unexpected)};
}

void Module::print_tree(std::ostream& out, int indent) const {
  out << name() << "(" << extra_repr();
  if (!children_.empty()) {
    out << "\n";
    for (const auto& [n, child] : children_) {
      out << std::string(static_cast<std::size_t>(indent + 2), ' ') << "(" << n << "): ";
      child->print_tree(out, indent + 2);
      out << "\n";
    }
    out << std::string(static_cast<std::size_t>(indent), ' ');
  }
  out << ")";
}

std::string Module::str() const {
  std::ostringstream out;
  print_tree(out, 0);
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Module& module) { return out << module.str(); }

}  // namespace hwaro::nn
