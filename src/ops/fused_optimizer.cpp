// Entry points of the fused optimiser kernels: eligibility, then one launch.
#include "ops/fused_optimizer.h"

#include <initializer_list>

#include "ops/op_helpers.h"

namespace hwaro::ops {
namespace {

bool fusable(OpId op, std::initializer_list<const Tensor*> tensors) {
  const Tensor& first = **tensors.begin();
  if (first.dtype() != kFloat32 && first.dtype() != kFloat64) return false;
  for (const Tensor* t : tensors) {
    if (!t->defined()) continue;
    if (t->dtype() != first.dtype() || t->device() != first.device() || !t->is_contiguous() ||
        t->numel() != first.numel()) {
      return false;
    }
  }
  return has_kernel(op, first.dtype(), first.device());
}

void add_views(KernelArgs& args, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->defined()) args.tensors[args.num_tensors++] = view_of(*t);
  }
}

}  // namespace

bool fused_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                     const Tensor& max_exp_avg_sq, const AdamStepScalars& s) {
  if (!fusable(OpId::AdamStep, {&param, &grad, &exp_avg, &exp_avg_sq, &max_exp_avg_sq})) return false;
  KernelArgs args;
  add_views(args, {&param, &grad, &exp_avg, &exp_avg_sq, &max_exp_avg_sq});
  const double scalars[] = {s.step_size, s.beta1, s.beta2, s.eps, s.inv_sqrt_bias2, s.l2, s.param_scale};
  for (int i = 0; i < 7; ++i) args.scalars[i] = scalars[i];
  launch(OpId::AdamStep, param.dtype(), param.device(), args);
  for (const Tensor* t : {&param, &exp_avg, &exp_avg_sq, &max_exp_avg_sq}) {
    if (t->defined()) bump_version(*t);
  }
  return true;
}

bool fused_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStepScalars& s) {
  if (!fusable(OpId::SgdStep, {&param, &grad, &momentum_buffer})) return false;
  KernelArgs args;
  add_views(args, {&param, &grad, &momentum_buffer});
  args.scalars[0] = s.lr;
  args.scalars[1] = s.momentum;
  args.scalars[2] = s.dampening;
  args.scalars[3] = s.weight_decay;
  args.ints[0] = s.first_step ? 1 : 0;
  args.ints[1] = s.nesterov ? 1 : 0;
  launch(OpId::SgdStep, param.dtype(), param.device(), args);
  bump_version(param);
  if (momentum_buffer.defined()) bump_version(momentum_buffer);
  return true;
}

}  // namespace hwaro::ops
