// softmax and log_softmax over one dim: the input as contiguous [outer, R, inner] (no copy when
// already contiguous), one dedicated kernel per op (the maximum subtracted for stability).
#include "hwaro/ops.h"
#include "ops/grad_record.h"
#include "ops/op_helpers.h"

namespace hwaro {

namespace {

Tensor softmax_like(OpId op, const char* name, const Tensor& x, std::int64_t dim) {
  ops::check_defined(name, {{"self", x}});
  HWARO_CHECK(x.is_floating_point(), name, "(): expected a floating point tensor, got ", x.dtype(),
              "; convert it with .to(hw::kFloat32) first");
  const std::int64_t d = ops::wrap_dim(dim, x.dim());
  ops::GradScope grad({&x});
  const Tensor in = x.contiguous();
  std::int64_t outer = 1, r = 1, inner = 1;
  for (std::int64_t i = 0; i < x.dim(); ++i) (i < d ? outer : (i == d ? r : inner)) *= x.size(i);
  Tensor out = ops::new_tensor(x.sizes(), x.dtype(), x.device());
  KernelArgs args;
  args.tensors[0] = ops::view_of(out);
  args.tensors[1] = ops::view_of(in);
  args.num_tensors = 2;
  args.ints[0] = outer;
  args.ints[1] = r;
  args.ints[2] = inner;
  ops::launch(op, x.dtype(), x.device(), args);
  if (grad.active()) {
    grad.record(out, {.kind = op == OpId::Softmax ? ops::GradOp::Softmax : ops::GradOp::LogSoftmax, .inputs = {x},
                      .ints = {d}});
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) { return softmax_like(OpId::Softmax, "softmax", x, dim); }
Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  return softmax_like(OpId::LogSoftmax, "log_softmax", x, dim);
}
Tensor Tensor::softmax(std::int64_t dim) const { return hwaro::softmax(*this, dim); }
Tensor Tensor::log_softmax(std::int64_t dim) const { return hwaro::log_softmax(*this, dim); }

}  // namespace hwaro
