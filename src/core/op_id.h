#pragma once
// OpId: the kernels a backend may provide. Adding an op adds an entry here and a
// kernel to each backend's table; no backend interface changes.
#include <cstdint>

namespace hwaro {

#define HWARO_FOR_EACH_OP(X)                                                                     \
  /* copy and fill */                                                                            \
  X(Copy)           /* out = cast(in), any dtypes, any strides */                                \
  X(Fill)           /* out = scalars[0] */                                                       \
  X(Arange)         /* out[i] = scalars[0] + i * scalars[1], out contiguous */                   \
  /* random, counter-based: ints[0] = seed, ints[1] = offset */                                  \
  X(RandUniform)    /* out ~ U[scalars[0], scalars[1]) */                                        \
  X(RandNormal)     /* out ~ N(scalars[0], scalars[1]^2) */                                      \
  X(RandInt)        /* out ~ integers in [ints[2], ints[3]) */                                   \
  /* unary elementwise: out, in (same shape) */                                                  \
  X(Neg) X(Abs) X(Exp) X(Expm1) X(Log) X(Log1p) X(Sqrt) X(Rsqrt) X(Tanh) X(Sigmoid) X(Relu) X(Silu) \
  X(Gelu)           /* ints[0] = 1: tanh approximation */                                        \
  X(LogicalNot)     /* out bool */                                                               \
  X(Clamp)          /* ints[0] bit 0: has min (scalars[0]), bit 1: has max (scalars[1]) */       \
  X(PowScalar)      /* out = in ^ scalars[0] */                                                  \
  /* binary elementwise: out, a, b (broadcast to out's shape) */                                 \
  X(Add)            /* out = a + scalars[0] * b */                                               \
  X(Sub)            /* out = a - scalars[0] * b */                                               \
  X(Mul) X(Div) X(Pow) X(Maximum) X(Minimum)                                                     \
  X(Eq) X(Ne) X(Lt) X(Le) X(Gt) X(Ge)              /* out bool */                                \
  X(LogicalAnd) X(LogicalOr) X(LogicalXor)         /* out bool */                                \
  X(Where)          /* out, cond (bool), a, b */                                                 \
  /* reductions: out [outer, inner], in [outer, R, inner] contiguous; ints = outer, R, inner */  \
  X(Sum) X(Prod) X(All) X(Any)                                                                   \
  X(Max) X(Min)     /* out values, out indices (int64), in */                                    \
  X(Softmax) X(LogSoftmax) /* out [outer, R, inner], in [outer, R, inner] */                     \
  /* linear algebra */                                                                           \
  X(Matmul)         /* out [B, M, N] = scalars[0] * a [B, M, K] @ b [B, K, N] + scalars[1] * out */ \
  /* indexing: ints[0] = dim */                                                                  \
  X(IndexSelect)    /* out, in, index (int64, 1-D) */                                            \
  X(Gather)         /* out, in, index (int64, out's shape) */                                    \
  X(Scatter)        /* out (already a copy of self), index, src: out[index] = src */             \
  X(ScatterAdd)     /* out (already a copy of self), index, src: out[index] += src */              \
  /* fused optimiser steps, multi-tensor (KernelArgs::tuples, one per parameter; all contiguous, */ \
  /* one dtype, updated in place; kernels/optimizer_math.h); tensors[0] names the device */       \
  X(AdamStep)       /* tuple: param, grad, exp_avg, exp_avg_sq[, max_exp_avg_sq]; its scalars =  \
                       step_size, inv_sqrt_bias2; scalars = beta1, beta2, eps, l2, param_scale; \
                       ints[0] = maximize */                                                    \
  X(SgdStep)        /* tuple: param, grad[, momentum_buffer]; its scalars[0] = first step;      \
                       scalars = lr, momentum, dampening, weight_decay; ints[0] = nesterov,     \
                       ints[1] = maximize */                                                    \
  /* 2-D windows: ints = kh, kw, sh, sw, ph, pw, dh, dw (kernels/window2d.h) */                  \
  X(Im2col)         /* cols [N, C*kh*kw, oh*ow] (last stride 1), x [N, C, H, W] contiguous */     \
  X(Col2im)         /* x [N, C, H, W] contiguous, cols [N, C*kh*kw, oh*ow] (last stride 1): x = sum of cols */ \
  X(MaxPool2d)      /* out [N, C, oh, ow], indices (int64, into H*W), x [N, C, H, W]; all contiguous */ \
  /* direct convolution (ops/convolution.h): ints = sh, sw, ph, pw, dh, dw, groups; all contiguous */ \
  X(Conv2d)               /* out [N, O, oh, ow], x [N, C, H, W], weight [O, C/g, kh, kw], bias [O] (null: none) */ \
  X(Conv2dBackwardInput)  /* grad_x [N, C, H, W], grad_out [N, O, oh, ow], weight */ \
  X(Conv2dBackwardWeight) /* grad_weight, grad_bias [O] (null: none), x, grad_out */

enum class OpId : std::int16_t {
#define HWARO_OP_ENUM(name) name,
  HWARO_FOR_EACH_OP(HWARO_OP_ENUM)
#undef HWARO_OP_ENUM
};

inline constexpr int kNumOps = 0
#define HWARO_OP_COUNT(name) +1
    HWARO_FOR_EACH_OP(HWARO_OP_COUNT)
#undef HWARO_OP_COUNT
    ;

const char* op_name(OpId op);

}  // namespace hwaro
