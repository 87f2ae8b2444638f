// DistributedDataParallel: the rank-0 broadcast, and the reducer. Each parameter's
// AccumulateGrad is replaced by a node that accumulates as usual and then tells the reducer;
// the reducer launches each full bucket's asynchronous all-reduce strictly in bucket order
// (so that every rank issues the same collectives in the same order), and when the last
// bucket is launched waits for all of them and writes the averages back into .grad().
#include "hwaro/nn/distributed_data_parallel.h"

#include <algorithm>
#include <sstream>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "hwaro/autograd.h"
#include "hwaro/ops.h"

namespace hwaro::nn {

namespace dist = hwaro::distributed;

struct DistributedDataParallelImpl::Reducer {
  struct Bucket {
    std::vector<Tensor> params;
    std::vector<std::string> names;
    std::vector<bool> ready;
    std::size_t ready_count = 0;
    Tensor flat;  // the gradients, concatenated: kept from step to step (a fresh buffer of this size
                  // is a fresh malloc whose pages fault in on every step)
    std::shared_ptr<dist::Work> work;
  };
  std::vector<Bucket> buckets;
  std::vector<std::shared_ptr<autograd::Node>> nodes;  // each parameter's gradient node
  std::size_t next_to_launch = 0;
  bool sync = true;

  void mark_ready(std::size_t b, std::size_t slot) {
    if (!sync) return;
    Bucket& bucket = buckets[b];
    HWARO_CHECK(!bucket.ready[slot], "DistributedDataParallel: ", bucket.names[slot], " received a gradient twice ",
                "in one synchronised backward (two backward calls over one forward?); use no_sync() for all but the ",
                "last backward of an accumulation");
    bucket.ready[slot] = true;
    ++bucket.ready_count;
    // MPI moves a non-blocking collective forward only inside MPI calls: test the buckets in
    // flight at every gradient, so their all-reduces advance while backward computes.
    for (std::size_t i = 0; i < next_to_launch; ++i) buckets[i].work->is_completed();
    while (next_to_launch < buckets.size() && buckets[next_to_launch].ready_count == buckets[next_to_launch].params.size()) {
      launch(buckets[next_to_launch++]);
    }
    if (next_to_launch == buckets.size()) finish();
  }

  static void launch(Bucket& bucket) {
    NoGradGuard no_grad;
    if (!bucket.flat.defined()) {
      std::int64_t numel = 0;
      for (const Tensor& p : bucket.params) numel += p.numel();
      const Tensor& first = bucket.params.front();
      bucket.flat = empty({numel}, {.dtype = first.dtype(), .device = first.device()});
    }
    std::int64_t offset = 0;
    for (const Tensor& p : bucket.params) {
      bucket.flat.narrow(0, offset, p.numel()).copy_(p.grad().reshape({-1}));
      offset += p.numel();
    }
    bucket.work = dist::all_reduce(bucket.flat, dist::ReduceOp::Avg, /*async_op=*/true);
  }

  void finish() {
    for (Bucket& bucket : buckets) {
      bucket.work->wait();
      std::int64_t offset = 0;
      for (const Tensor& p : bucket.params) {
        Tensor grad = p.grad();
        grad.copy_(bucket.flat.narrow(0, offset, p.numel()).view(p.sizes()));
        offset += p.numel();
      }
      bucket.work.reset();
      bucket.ready.assign(bucket.params.size(), false);
      bucket.ready_count = 0;
    }
    next_to_launch = 0;
  }

  // Names of the parameters a synchronised backward left without a gradient ("" when none).
  std::string missing() const {
    bool started = false;
    for (const Bucket& bucket : buckets) started = started || bucket.ready_count > 0;
    if (!started) return "";
    std::string out;
    for (const Bucket& bucket : buckets) {
      for (std::size_t i = 0; i < bucket.params.size(); ++i) {
        if (!bucket.ready[i]) out += (out.empty() ? "" : ", ") + bucket.names[i];
      }
    }
    return out;
  }
};

namespace {

// Stands in for a parameter's AccumulateGrad: accumulates, then tells the reducer.
class AccumulateThenReduce final : public autograd::Node {
 public:
  AccumulateThenReduce(Tensor param, std::weak_ptr<DistributedDataParallelImpl::Reducer> reducer, std::size_t bucket,
                       std::size_t slot)
      : param_(std::move(param)), reducer_(std::move(reducer)), bucket_(bucket), slot_(slot) {
    set_sequence_nr(kAsSoonAsReady);  // so that a full bucket's all-reduce starts during backward
  }
  std::string name() const override { return "DistributedDataParallelAccumulateGrad"; }
  void check_before_backward() const override { autograd::check_grad_slot(param_); }
  std::vector<Tensor> apply(const Tensor& grad_output) override {
    autograd::accumulate_into(param_, grad_output);
    if (auto reducer = reducer_.lock()) reducer->mark_ready(bucket_, slot_);
    return {};
  }

 private:
  Tensor param_;
  std::weak_ptr<DistributedDataParallelImpl::Reducer> reducer_;
  std::size_t bucket_, slot_;
};

// Every rank must wrap the same model: rank 0's values are broadcast into every rank's tensors,
// and the buckets decide which all-reduces each rank issues. This is checked first, by one
// collective of the same size on every rank, so that a model that differs (another shape, dtype,
// requires_grad, or number of tensors) is the same clear error on every rank, not a failed
// broadcast on some ranks while the others wait.
void check_same_model_on_every_rank(const Module& module) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a over each tensor's dtype, shape and requires_grad
  const auto mix = [&hash](std::uint64_t v) { hash = (hash ^ v) * 1099511628211ULL; };
  const auto mix_tensor = [&mix](const Tensor& t) {
    mix(static_cast<std::uint64_t>(t.dtype()));
    mix(static_cast<std::uint64_t>(t.requires_grad()));
    mix(static_cast<std::uint64_t>(t.dim()));
    for (const std::int64_t size : t.sizes()) mix(static_cast<std::uint64_t>(size));
  };
  std::int64_t parameters = 0, buffers = 0;
  for (const Tensor& p : module.parameters()) {
    mix_tensor(p);
    ++parameters;
  }
  for (const Tensor& b : module.buffers()) {
    if (!b.defined()) continue;
    mix_tensor(b);
    ++buffers;
  }
  const Device device = dist::default_group().backend() == "nccl" ? Device(DeviceType::CUDA, dist::get_local_rank())
                                                                  : Device(DeviceType::CPU);
  const Tensor mine = tensor(std::vector<std::int64_t>{parameters, buffers, static_cast<std::int64_t>(hash)},
                             {.dtype = kInt64, .device = device});
  std::vector<Tensor> all;
  for (int r = 0; r < dist::get_world_size(); ++r) all.push_back(empty_like(mine));
  dist::all_gather(all, mine);
  std::ostringstream ranks;
  bool same = true;
  std::vector<std::int64_t> first;
  for (int r = 0; r < dist::get_world_size(); ++r) {
    const Tensor on_cpu = all[static_cast<std::size_t>(r)].cpu();
    const std::vector<std::int64_t> v(on_cpu.data_ptr<std::int64_t>(), on_cpu.data_ptr<std::int64_t>() + 3);
    if (r == 0) first = v;
    same = same && v == first;
    ranks << (r ? "; " : "") << "rank " << r << ": " << v[0] << " parameters, " << v[1] << " buffers"
          << (v == first ? "" : ", not rank 0's shapes, dtypes or requires_grad");
  }
  HWARO_CHECK(same, "DistributedDataParallel: the wrapped module differs across ranks (", ranks.str(), "); every ",
              "rank must build the same model, since rank 0's parameters and buffers are broadcast into the others'");
}

void broadcast_from_rank0(const std::vector<Tensor>& tensors) {
  NoGradGuard no_grad;
  std::vector<std::shared_ptr<dist::Work>> works;
  for (const Tensor& t : tensors) {
    if (t.defined()) works.push_back(dist::broadcast(t, 0, /*async_op=*/true));
  }
  for (auto& w : works) w->wait();
}

}  // namespace

DistributedDataParallelImpl::DistributedDataParallelImpl(std::shared_ptr<Module> module,
                                                         DistributedDataParallelOptions options)
    : module_(std::move(module)), options_(options), reducer_(std::make_shared<Reducer>()) {
  HWARO_CHECK(module_ != nullptr, "DistributedDataParallel: the module to wrap is empty");
  HWARO_CHECK(dist::is_initialized(), "DistributedDataParallel: the default process group is not initialised; call ",
              "hw::distributed::init_process_group(\"mpi\") first, in every rank (started by mpirun)");
  HWARO_CHECK(options_.bucket_cap_mb > 0, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
              options_.bucket_cap_mb);
  register_module("module", module_);
  check_same_model_on_every_rank(*module_);
  broadcast_from_rank0(module_->parameters());
  broadcast_from_rank0(module_->buffers());

  // Buckets in reverse registration order, each one dtype, closed once it reaches the cap. The
  // first closes at 1 MiB already, as PyTorch's does: it holds the gradients backward produces
  // first, and a small one starts the communication early.
  const auto named = module_->named_parameters();
  const double cap_bytes = options_.bucket_cap_mb * 1024.0 * 1024.0;
  const double first_cap_bytes = std::min(cap_bytes, 1024.0 * 1024.0);
  double bytes = 0;
  for (auto it = named.rbegin(); it != named.rend(); ++it) {
    const Tensor& p = it->second;
    if (!p.requires_grad()) continue;
    const double cap = reducer_->buckets.size() == 1 ? first_cap_bytes : cap_bytes;
    const bool fresh = reducer_->buckets.empty() || bytes >= cap ||
                       reducer_->buckets.back().params.front().dtype() != p.dtype();
    if (fresh) {
      reducer_->buckets.emplace_back();
      bytes = 0;
    }
    Reducer::Bucket& bucket = reducer_->buckets.back();
    auto node = std::make_shared<AccumulateThenReduce>(p, reducer_, reducer_->buckets.size() - 1, bucket.params.size());
    autograd::ensure_meta(p).grad_accumulator = node;
    reducer_->nodes.push_back(std::move(node));
    bucket.params.push_back(p);
    bucket.names.push_back(it->first);
    bucket.ready.push_back(false);
    bytes += static_cast<double>(p.nbytes());
  }
}

DistributedDataParallelImpl::~DistributedDataParallelImpl() = default;

Tensor DistributedDataParallelImpl::forward(const Tensor& input) {
  const std::string missing = reducer_->missing();
  HWARO_CHECK(
      missing.empty(), "DistributedDataParallel: the last synchronised backward gave no gradient to ", missing,
      "; every parameter that required grad when DistributedDataParallel was built must take part ",
      "in the loss of every synchronised backward (hwaro has no find_unused_parameters). Make sure every output ",
      "of forward takes part in the loss; a parameter the model does not use must be removed from it, or ",
      "frozen with requires_grad_(false) before wrapping it, on every rank (the gradient buckets are fixed ",
      "when DistributedDataParallel is built: freezing it afterwards does not take it out)");
  if (options_.broadcast_buffers && dist::get_world_size() > 1) broadcast_from_rank0(module_->buffers());
  return module_->forward(input);
}

std::vector<std::size_t> DistributedDataParallelImpl::bucket_sizes() const {
  std::vector<std::size_t> out;
  for (const auto& b : reducer_->buckets) out.push_back(b.params.size());
  return out;
}

DistributedDataParallelImpl::NoSyncGuard::NoSyncGuard(DistributedDataParallelImpl& ddp)
    : ddp_(ddp), previous_(ddp.reducer_->sync) {
  ddp_.reducer_->sync = false;
}

DistributedDataParallelImpl::NoSyncGuard::~NoSyncGuard() { ddp_.reducer_->sync = previous_; }

}  // namespace hwaro::nn
