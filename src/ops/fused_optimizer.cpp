// Entry points of the fused optimiser kernels: each parameter's eligibility, the parameters
// batched by device and dtype, one launch per batch.
#include "ops/fused_optimizer.h"

#include <algorithm>
#include <array>

#include "ops/op_helpers.h"

namespace hwaro::ops {
namespace {

// One parameter as the kernel sees it: its tensors in OpId's order (the parameter first, the
// gradient second; an undefined one is absent) and its own scalars.
struct Candidate {
  std::array<const Tensor*, kMaxKernelTensors> tensors{};
  double scalars[2] = {};
};

bool fusable(OpId op, const Candidate& c) {
  const Tensor& first = *c.tensors[0];
  if (first.dtype() != kFloat32 && first.dtype() != kFloat64) return false;
  for (const Tensor* t : c.tensors) {
    if (t == nullptr || !t->defined()) continue;
    if (t->dtype() != first.dtype() || t->device() != first.device() || !t->is_contiguous() ||
        t->numel() != first.numel()) {
      return false;
    }
  }
  return has_kernel(op, first.dtype(), first.device());
}

TensorTuple tuple_of(const Candidate& c) {
  TensorTuple tuple;
  for (std::size_t k = 0; k < c.tensors.size(); ++k) {
    const Tensor* t = c.tensors[k];
    if (t != nullptr && t->defined()) tuple.data[k] = view_of(*t).data;
  }
  tuple.numel = c.tensors[0]->numel();
  tuple.scalars[0] = c.scalars[0];
  tuple.scalars[1] = c.scalars[1];
  return tuple;
}

// Launches `op` once per device and dtype over the fusable candidates, with the group's scalars
// and ints from `shared`; returns the indices of the others.
std::vector<std::size_t> launch_batched(OpId op, const std::vector<Candidate>& candidates, const KernelArgs& shared) {
  struct Batch {
    const Tensor* first;
    std::vector<TensorTuple> tuples;
  };
  std::vector<Batch> batches;
  std::vector<std::size_t> fused, left;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!fusable(op, c)) {
      left.push_back(i);
      continue;
    }
    const Tensor& param = *c.tensors[0];
    auto batch = std::find_if(batches.begin(), batches.end(), [&](const Batch& b) {
      return b.first->device() == param.device() && b.first->dtype() == param.dtype();
    });
    if (batch == batches.end()) batch = batches.insert(batches.end(), Batch{&param, {}});
    batch->tuples.push_back(tuple_of(c));
    fused.push_back(i);
  }
  for (const Batch& b : batches) {
    KernelArgs args = shared;
    args.tensors[0] = view_of(*b.first);
    args.num_tensors = 1;
    args.tuples = b.tuples.data();
    args.num_tuples = static_cast<std::int64_t>(b.tuples.size());
    launch(op, b.first->dtype(), b.first->device(), args);
  }
  // Everything but the gradient was written in place.
  for (std::size_t i : fused) {
    const auto& tensors = candidates[i].tensors;
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      if (k != 1 && tensors[k] != nullptr && tensors[k]->defined()) bump_version(*tensors[k]);
    }
  }
  return left;
}

}  // namespace

std::vector<std::size_t> fused_adam_step(const std::vector<AdamParam>& params, const AdamGroupScalars& s) {
  std::vector<Candidate> candidates;
  candidates.reserve(params.size());
  for (const AdamParam& p : params) {
    candidates.push_back({.tensors = {&p.param, &p.grad, &p.exp_avg, &p.exp_avg_sq, &p.max_exp_avg_sq},
                          .scalars = {p.step_size, p.inv_sqrt_bias2}});
  }
  KernelArgs shared;
  const double scalars[] = {s.beta1, s.beta2, s.eps, s.l2, s.param_scale};
  std::copy(std::begin(scalars), std::end(scalars), shared.scalars);
  shared.ints[0] = s.maximize ? 1 : 0;
  return launch_batched(OpId::AdamStep, candidates, shared);
}

std::vector<std::size_t> fused_sgd_step(const std::vector<SgdParam>& params, const SgdGroupScalars& s) {
  std::vector<Candidate> candidates;
  candidates.reserve(params.size());
  for (const SgdParam& p : params) {
    candidates.push_back(
        {.tensors = {&p.param, &p.grad, &p.momentum_buffer}, .scalars = {p.first_step ? 1.0 : 0.0, 0.0}});
  }
  KernelArgs shared;
  shared.scalars[0] = s.lr;
  shared.scalars[1] = s.momentum;
  shared.scalars[2] = s.dampening;
  shared.scalars[3] = s.weight_decay;
  shared.ints[0] = s.nesterov ? 1 : 0;
  shared.ints[1] = s.maximize ? 1 : 0;
  return launch_batched(OpId::SgdStep, candidates, shared);
}

}  // namespace hwaro::ops
