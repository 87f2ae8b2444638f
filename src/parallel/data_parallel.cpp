// DataParallel: replicas built once, synchronised by version, scatter/run/gather on one thread
// per device, and gradients routed from each replica's parameters into the original's.
#include "hwaro/nn/data_parallel.h"

#include <exception>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "autograd/autograd_meta.h"
#include "core/splitmix64.h"
#include "core/storage.h"
#include "hwaro/autograd.h"
#include "hwaro/cuda.h"
#include "hwaro/distributed.h"
#include "hwaro/errors.h"
#include "hwaro/generator.h"
#include "hwaro/ops.h"
#include "ops/thread_generator.h"

namespace hwaro::nn {

namespace {

// Stands in for a replica parameter's AccumulateGrad: the gradient that reaches the replica's
// parameter goes on, converted to the original's device (where it is now: the wrapped module may
// have been moved since), to the original parameter, where the engine sums it with the other
// replicas' (PyTorch's Broadcast backward does the same).
class GradToOriginal final : public autograd::Node {
 public:
  explicit GradToOriginal(const Tensor& original) : original_(original) {
    mutable_next_edges().push_back(autograd::gradient_edge(original));
  }
  std::string name() const override { return "DataParallelGradToOriginal"; }
  std::vector<Tensor> apply(const Tensor& grad_output) override { return {grad_output.to(original_.device())}; }

 private:
  Tensor original_;
};

// One tensor of a replica and the original it mirrors, with the storage and versions of both at
// the last copy. The original's storage is replaced, not written, when the wrapped module is
// moved or converted (set_data), so versions alone would miss that.
struct MirroredTensor {
  Tensor original, copy;
  bool parameter = false;
  std::weak_ptr<Storage> original_storage;
  std::uint32_t original_version = 0, copy_version = 0;
  std::shared_ptr<autograd::Node> route;  // a parameter's GradToOriginal, made once the original requires grad

  void sync() {
    if (parameter) follow_requires_grad();
    const std::shared_ptr<Storage>& storage = original.impl()->storage();
    const bool same_storage = !original_storage.owner_before(storage) && !storage.owner_before(original_storage);
    if (same_storage && original.version() == original_version && copy.version() == copy_version) return;
    if (copy.dtype() == original.dtype()) {
      copy.copy_(original);
    } else {
      copy.set_data(original.to(copy.device()));  // the module was converted (model->to(kFloat64))
    }
    original_storage = storage;
    original_version = original.version();
    copy_version = copy.version();
  }

  // A parameter frozen or unfrozen in the wrapped module is so in the replica, and the replica's
  // gradient goes to the original only while the original requires grad.
  void follow_requires_grad() {
    if (copy.requires_grad() != original.requires_grad()) copy.requires_grad_(original.requires_grad());
    if (original.requires_grad() && route == nullptr) {
      route = std::make_shared<GradToOriginal>(original);
      autograd::ensure_meta(copy).grad_accumulator = route;
    }
  }
};

struct Replica {
  std::shared_ptr<Module> module;
  std::vector<MirroredTensor> tensors;  // parameters then buffers
};

std::vector<Device> default_devices(const Module& module) {
  std::vector<Device> devices;
  for (int i = 0; i < cuda::device_count(); ++i) devices.emplace_back(DeviceType::CUDA, i);
  if (devices.empty()) devices.push_back(module.device());
  return devices;
}

// A replica's seed: the default generator's seed and a counter taken from it, mixed (SplitMix64)
// so that neighbouring counters give unrelated Philox streams.
std::uint64_t replica_seed(std::uint64_t seed, std::uint64_t counter) {
  const auto mix = [](std::uint64_t x) { return splitmix64_mix(x + kSplitMix64Gamma); };
  return mix(seed ^ mix(counter));
}

std::string device_list(const std::vector<Device>& devices) {
  std::ostringstream s;
  for (std::size_t i = 0; i < devices.size(); ++i) s << (i ? ", " : "") << devices[i];
  return s.str();
}

// Builds a replica without moving the default generator: the initial values a factory draws
// are overwritten anyway, and a run must not depend on how many devices it used.
std::shared_ptr<Module> build_replica(const Module& original, const ReplicaFactory& factory,
                                      const ReplicaFactory& default_factory) {
  Generator& generator = default_generator();
  const std::uint64_t seed = generator.seed(), offset = generator.offset();
  std::shared_ptr<Module> replica;
  const char* source = "factory";
  if (factory) {
    replica = factory();
  } else if ((replica = original.clone_module()) != nullptr) {
    source = "clone_module()";
  } else if (default_factory) {
    replica = default_factory();
    source = "default constructor";
  } else {
    source = nullptr;
  }
  generator.manual_seed(seed);
  generator.take(offset);
  HWARO_CHECK(source != nullptr, "DataParallel: ", original.name(), " cannot be replicated: it does not override ",
              "clone_module() and has no default constructor; override clone_module() to return a new ",
              original.name(), " of the same configuration, or give DataParallel a replica factory");
  HWARO_CHECK(replica != nullptr, "DataParallel: the replica ", source, " returned no module; it must return a new ",
              original.name(), " of the same configuration as the wrapped one");
  return replica;
}

Replica make_replica(const Module& original, const ReplicaFactory& factory, const ReplicaFactory& default_factory,
                     Device device) {
  Replica r;
  r.module = build_replica(original, factory, default_factory);
  r.module->to(device);
  const auto own_params = original.named_parameters(), rep_params = r.module->named_parameters();
  const auto own_buffers = original.named_buffers(), rep_buffers = r.module->named_buffers();
  auto same_layout = [](const auto& a, const auto& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].first != b[i].first || a[i].second.defined() != b[i].second.defined()) return false;
      if (a[i].second.defined() && a[i].second.sizes() != b[i].second.sizes()) return false;
    }
    return true;
  };
  HWARO_CHECK(same_layout(own_params, rep_params) && same_layout(own_buffers, rep_buffers),
              "DataParallel: a replica built for ", device, " does not have the parameters and buffers of the ",
              "wrapped ", original.name(), " (same names, order and shapes); its factory (or default constructor, ",
              "or clone_module()) must build the same configuration. Wrapped:\n", original.str(), "\nreplica:\n",
              r.module->str());
  NoGradGuard no_grad;
  for (std::size_t i = 0; i < own_params.size(); ++i) {
    r.tensors.push_back({.original = own_params[i].second, .copy = rep_params[i].second, .parameter = true});
  }
  for (std::size_t i = 0; i < own_buffers.size(); ++i) {
    if (own_buffers[i].second.defined()) {
      r.tensors.push_back({.original = own_buffers[i].second, .copy = rep_buffers[i].second});
    }
  }
  for (MirroredTensor& t : r.tensors) t.sync();  // a fresh weak_ptr never matches: every tensor is copied
  return r;
}

// Rethrows a replica's error with the replica and device named, as PyTorch's "Caught X in replica
// N on device D", and as the same hw error type, so that a caller's catch (hw::OutOfMemoryError&)
// still applies. An exception of another type goes on unchanged: it cannot be rebuilt with a new message.
[[noreturn]] void rethrow_from_replica(const std::exception_ptr& error, std::size_t replica, const Device& device) {
  const auto where = [&](const char* type, const std::exception& e) {
    return hwaro::detail::str_cat("DataParallel: caught ", type, " in replica ", replica, " on device ", device, ": ",
                                  e.what());
  };
  try {
    std::rethrow_exception(error);
  } catch (const DeviceMismatchError& e) {
    throw DeviceMismatchError(where("hw::DeviceMismatchError", e));
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(where("hw::OutOfMemoryError", e));
  } catch (const IndexError& e) {
    throw IndexError(where("hw::IndexError", e));
  } catch (const distributed::DistributedError& e) {
    throw distributed::DistributedError(where("hw::distributed::DistributedError", e));
  } catch (const Error& e) {
    throw Error(where("hw::Error", e));
  }
}

}  // namespace

struct DataParallelImpl::Replicas {
  std::vector<Replica> others;  // the replicas of devices[1..]
};

DataParallelImpl::DataParallelImpl(std::shared_ptr<Module> module, std::vector<Device> devices,
                                   ReplicaFactory factory, ReplicaFactory default_factory)
    : module_(std::move(module)), devices_(std::move(devices)), replicas_(std::make_unique<Replicas>()) {
  HWARO_CHECK(module_ != nullptr, "DataParallel: the module to wrap is empty (a null pointer or an empty holder)");
  if (devices_.empty()) devices_ = default_devices(*module_);
  for (const Device& d : devices_) {
    HWARO_CHECK(!d.is_cuda() || (d.has_index() && d.index() < cuda::device_count()), "DataParallel: device ", d,
                " is not one of the ", cuda::device_count(), " visible GPUs; give devices with explicit indices, ",
                "e.g. {hw::Device(\"cuda:0\"), hw::Device(\"cuda:1\")}");
  }
  // As PyTorch's: one device, the module is moved there; several, it may still be moved after
  // wrapping (the guide's `model = DataParallel(model); model->to(device)`), and forward checks.
  if (devices_.size() == 1) module_->to(devices_[0]);
  register_module("module", module_);
  for (std::size_t i = 1; i < devices_.size(); ++i) {
    replicas_->others.push_back(make_replica(*module_, factory, default_factory, devices_[i]));
  }
}

DataParallelImpl::~DataParallelImpl() = default;

std::shared_ptr<Module> DataParallelImpl::replica(std::size_t i) const {
  HWARO_CHECK(i < devices_.size(), "DataParallel: replica ", i, " does not exist; there are ", devices_.size());
  return i == 0 ? module_ : replicas_->others[i - 1].module;
}

void DataParallelImpl::check_module_on_first_device() const {
  const auto check = [&](const std::string& name, const Tensor& t) {
    HWARO_CHECK_AS(DeviceMismatchError, !t.defined() || t.device() == devices_[0], "DataParallel: the module must have its parameters and ",
                "buffers on the first device, ", devices_[0], " (replica 0 runs there), but ", name, " is on ",
                t.device(), "; move it with model->to(", devices_[0], "). Devices: ", device_list(devices_));
  };
  for (const auto& [name, p] : module_->named_parameters()) check(name, p);
  for (const auto& [name, b] : module_->named_buffers()) check(name, b);
}

std::string DataParallelImpl::extra_repr() const { return "devices=[" + device_list(devices_) + "]"; }

Tensor DataParallelImpl::forward(const Tensor& input) {
  if (devices_.size() == 1) return module_->forward(input);
  HWARO_CHECK(input.defined() && input.dim() >= 1 && input.size(0) > 0, "DataParallel: the input must have a ",
              "batch dimension (dim 0) of at least one row to split over the devices; got ",
              input.defined() ? "shape " : "an undefined tensor", input.defined() ? input.sizes() : IntArrayRef{});
  check_module_on_first_device();
  {
    NoGradGuard no_grad;
    for (Replica& r : replicas_->others) {
      r.module->train(module_->is_training());
      for (MirroredTensor& t : r.tensors) t.sync();
    }
  }
  const std::int64_t rows = input.size(0);
  const auto count = static_cast<std::int64_t>(devices_.size());
  const std::int64_t chunk = (rows + count - 1) / count;
  const std::size_t parts = static_cast<std::size_t>((rows + chunk - 1) / chunk);

  // Scattered here, on the calling thread, as torch.nn.parallel.scatter does: recording the split
  // and the copies touches the input's autograd state (a leaf's gradient accumulator is made on
  // first use), which the replicas' threads must not do at once.
  std::vector<Tensor> chunks(parts);
  for (std::size_t i = 0; i < parts; ++i) {
    const auto start = static_cast<std::int64_t>(i) * chunk;
    chunks[i] = input.narrow(0, start, std::min(chunk, rows - start)).to(devices_[i]);
  }
  const bool grad_enabled = is_grad_enabled();
  // As torch.nn.parallel.parallel_apply, each replica runs with its GPU as the current device and
  // on the caller's current stream of that GPU: a new thread would start on cuda:0's default
  // stream, so that "cuda" inside forward named cuda:0, and the gather below (ordered after the
  // caller's streams) would not wait for a replica that wrote its output elsewhere.
  std::vector<std::optional<cuda::Stream>> streams(parts);
  for (std::size_t i = 0; i < parts; ++i) {
    if (devices_[i].is_cuda()) streams[i] = cuda::current_stream(devices_[i].index());
  }
  // Each replica draws (dropout's masks) from a generator of its own, seeded from the default
  // generator and a counter taken from it here, so that a seeded run gives the same numbers
  // whatever order the threads run in; the replicas sharing the default generator took their
  // counters in that order. PyTorch gets the same from its one generator per GPU.
  std::vector<Generator> generators;
  generators.reserve(parts);
  {
    Generator& shared = default_generator();
    const std::uint64_t first = shared.take(parts);
    for (std::size_t i = 0; i < parts; ++i) generators.emplace_back(replica_seed(shared.seed(), first + i));
  }
  std::vector<Tensor> outputs(parts);
  std::vector<std::exception_ptr> errors(parts);
  auto run = [&](std::size_t i) {
    try {
      GradModeGuard grad_mode(grad_enabled);  // grad mode is per thread
      const ops::ThreadGeneratorGuard own_generator(generators[i]);
      std::optional<cuda::StreamGuard> on_stream;
      if (streams[i]) on_stream.emplace(*streams[i]);
      outputs[i] = replica(i)->forward(chunks[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  {
    std::vector<std::thread> threads;
    // Joins the threads started so far however this scope is left: a thread still joinable when
    // destroyed (one started before another failed to start) would be std::terminate.
    struct JoinAll {
      std::vector<std::thread>& threads;
      ~JoinAll() {
        for (std::thread& t : threads) t.join();
      }
    } join_all{threads};
    for (std::size_t i = 1; i < parts; ++i) {
      try {
        threads.emplace_back(run, i);
      } catch (const std::system_error& e) {
        throw Error(hwaro::detail::str_cat("DataParallel: could not start the thread of replica ", i, " on device ",
                                           devices_[i], ": ", e.what()));
      }
    }
    run(0);  // the calling thread is device 0's
  }
  for (std::size_t i = 0; i < parts; ++i) {
    if (errors[i]) rethrow_from_replica(errors[i], i, devices_[i]);
  }
  if (parts == 1) return outputs[0];
  for (std::size_t i = 0; i < parts; ++i) {
    HWARO_CHECK(outputs[i].defined() && outputs[i].dim() >= 1, "DataParallel: the replica on ", devices_[i],
                " returned ", outputs[i].defined() ? "a 0-dim tensor" : "an undefined tensor",
                "; outputs are concatenated along dim 0, so forward must return one row per input row");
    outputs[i] = outputs[i].to(devices_[0]);
  }
  return cat(outputs, 0);
}

}  // namespace hwaro::nn
