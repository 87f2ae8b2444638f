#pragma once
// How ops tell autograd what they did, without depending on it (ARCHITECTURE.md: autograd sits
// above ops). A differentiable entry point opens a GradScope over its tensor inputs; when grad
// mode is on and one of them requires grad, the scope turns grad mode off for the op's body
// (so the ops it is built from record nothing) and record() hands a GradCall to the recorder
// that the autograd layer installs, which attaches the op's backward node to the result.
#include <initializer_list>
#include <vector>

#include "core/dim_vector.h"
#include "core/op_id.h"
#include "hwaro/tensor.h"

namespace hwaro::ops {

// The differentiable primitives. Composite ops (matmul, mean, var, logsumexp, ...) are built
// from these and get their gradients from them.
enum class GradOp : std::uint8_t {
  Unary,        // op: Neg ... PowScalar; reals/ints: the kernel's scalars/ints
  Binary,       // op: Add, Sub (reals[0] alpha), Mul, Div, Pow, Maximum, Minimum; inputs a, b
  Where,        // inputs a, b; saved: condition
  MaskedFill,   // inputs x; saved: mask
  Sum,          // ints: dims as given (empty: all); flag: keepdim
  Prod,         // ints: the dim (empty: all); flag: keepdim
  Extremum,     // amax/amin/max/min values; ints: dims; flag: keepdim
  Softmax,      // ints[0]: wrapped dim
  LogSoftmax,   // ints[0]: wrapped dim
  Mm,           // inputs a [M,K], b [K,N]
  Bmm,          // inputs a [B,M,K], b [B,K,N]
  Addmm,        // inputs self, a, b; reals[0] beta, reals[1] alpha
  Reshape,      // view, reshape, flatten, squeeze, unsqueeze: back to the input's sizes
  Expand,       // expand: summed back to the input's sizes
  Permute,      // ints: the permutation (transpose is one)
  Slice,        // ints: dim, start, step (narrow and slice)
  Select,       // ints: dim, index
  Cat,          // inputs: the tensors; ints[0]: dim
  Convert,      // to(dtype / device), clone, contiguous: the gradient converted back
  IndexSelect,  // ints[0]: dim; saved: index (int64, 1-D)
  Gather,       // ints[0]: dim; saved: index
  Scatter,      // inputs self, src; ints[0]: dim; saved: index
  ScatterAdd,   // inputs self, src; ints[0]: dim; saved: index
  Im2col,       // inputs x; ints: kh, kw, sh, sw, ph, pw, dh, dw, H, W
  Col2im,       // inputs cols; ints as Im2col's
  MaxPool2d,    // inputs x; saved: indices (int64 into H*W, the values' shape)
  Conv2d,       // inputs x, weight[, bias]; ints: sh, sw, ph, pw, dh, dw, groups (ops/convolution.h)
};

struct GradCall {
  GradOp kind;
  OpId op = OpId::Copy;        // the kernel, for Unary and Binary
  std::vector<Tensor> inputs;  // the differentiable inputs, in the order the rule expects
  std::vector<Tensor> saved;   // non-differentiable tensors the rule needs (index, mask, condition)
  DimVector ints;
  double reals[4] = {};
  bool flag = false;
};

// Attaches call's backward node to out (installed by the autograd layer at start-up).
using GradRecorder = void (*)(GradCall&& call, const Tensor& out);
void set_grad_recorder(GradRecorder recorder);

class GradScope {
 public:
  GradScope(std::initializer_list<const Tensor*> inputs);
  explicit GradScope(const std::vector<Tensor>& inputs);
  ~GradScope();
  GradScope(const GradScope&) = delete;
  GradScope& operator=(const GradScope&) = delete;

  // True when the result must be recorded; build the GradCall only then.
  bool active() const { return active_; }
  // Records call for out (when active) and returns out.
  const Tensor& record(const Tensor& out, GradCall&& call);

 private:
  void enter();
  bool active_ = false;
};

// An in-place op on `self` (writing `other` into it, if given) while grad mode is on: refused
// before anything runs when it would change a tensor autograd depends on.
void check_inplace_grad(const char* op, const Tensor& self, const Tensor* other = nullptr);

}  // namespace hwaro::ops
