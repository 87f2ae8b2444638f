#pragma once
// Which dtypes each elementwise, reduction, index and optimiser op supports, stated once for
// every backend: an op that takes a dtype on the CPU takes it on the GPU too, so a program
// that runs on one device runs on the other. Each family is an X-macro list of
// (kernel template, OpId, C++ types...); a backend's register_*_kernels expands it with
// HWARO_REGISTER_KERNEL, which names the kernel template from that backend's own namespace.
// Matmul and convolution are not listed: their dtypes follow the library behind them
// (OpenBLAS and oneDNN on the CPU, cuBLAS and cuDNN on the GPU).
#include "core/kernel_table.h"

// Expands one list row into a registration; `table` is the KernelTable being filled.
#define HWARO_REGISTER_KERNEL(KERNEL, OP, ...) table.set_types<KERNEL, __VA_ARGS__>(OpId::OP);

#define HWARO_COPY_KERNELS(X)              \
  X(CopyKernel, Copy, HWARO_ALL_TYPES)     \
  X(FillKernel, Fill, HWARO_ALL_TYPES)     \
  X(ArangeKernel, Arange, HWARO_NUMERIC_TYPES)

#define HWARO_UNARY_KERNELS(X)                   \
  X(NegKernel, Neg, HWARO_NUMERIC_TYPES)         \
  X(AbsKernel, Abs, HWARO_ALL_TYPES)             \
  X(ReluKernel, Relu, HWARO_NUMERIC_TYPES)       \
  X(ExpKernel, Exp, HWARO_FLOAT_TYPES)           \
  X(Expm1Kernel, Expm1, HWARO_FLOAT_TYPES)       \
  X(LogKernel, Log, HWARO_FLOAT_TYPES)           \
  X(Log1pKernel, Log1p, HWARO_FLOAT_TYPES)       \
  X(SqrtKernel, Sqrt, HWARO_FLOAT_TYPES)         \
  X(RsqrtKernel, Rsqrt, HWARO_FLOAT_TYPES)       \
  X(TanhKernel, Tanh, HWARO_FLOAT_TYPES)         \
  X(SigmoidKernel, Sigmoid, HWARO_FLOAT_TYPES)   \
  X(SiluKernel, Silu, HWARO_FLOAT_TYPES)         \
  X(GeluKernel, Gelu, HWARO_FLOAT_TYPES)         \
  X(LogicalNotKernel, LogicalNot, HWARO_ALL_TYPES) \
  X(ClampKernel, Clamp, HWARO_NUMERIC_TYPES)     \
  X(PowScalarKernel, PowScalar, HWARO_ALL_TYPES)

#define HWARO_BINARY_KERNELS(X)                    \
  X(AddKernel, Add, HWARO_ALL_TYPES)               \
  X(SubKernel, Sub, HWARO_NUMERIC_TYPES)           \
  X(MulKernel, Mul, HWARO_ALL_TYPES)               \
  X(DivKernel, Div, HWARO_FLOAT_TYPES)             \
  X(PowKernel, Pow, HWARO_ALL_TYPES)               \
  X(MaximumKernel, Maximum, HWARO_ALL_TYPES)       \
  X(MinimumKernel, Minimum, HWARO_ALL_TYPES)       \
  X(EqKernel, Eq, HWARO_ALL_TYPES)                 \
  X(NeKernel, Ne, HWARO_ALL_TYPES)                 \
  X(LtKernel, Lt, HWARO_ALL_TYPES)                 \
  X(LeKernel, Le, HWARO_ALL_TYPES)                 \
  X(GtKernel, Gt, HWARO_ALL_TYPES)                 \
  X(GeKernel, Ge, HWARO_ALL_TYPES)                 \
  X(LogicalAndKernel, LogicalAnd, HWARO_ALL_TYPES) \
  X(LogicalOrKernel, LogicalOr, HWARO_ALL_TYPES)   \
  X(LogicalXorKernel, LogicalXor, HWARO_ALL_TYPES) \
  X(WhereKernel, Where, HWARO_ALL_TYPES)

#define HWARO_REDUCTION_KERNELS(X)                                 \
  X(ArithmeticReduce<kernels::SumOp>::Kernel, Sum, HWARO_ALL_TYPES)  \
  X(ArithmeticReduce<kernels::ProdOp>::Kernel, Prod, HWARO_ALL_TYPES) \
  X(LogicalReduce<kernels::AllOp>::Kernel, All, HWARO_ALL_TYPES)     \
  X(LogicalReduce<kernels::AnyOp>::Kernel, Any, HWARO_ALL_TYPES)     \
  X(ExtremumReduce<kernels::MaxOp>::Kernel, Max, HWARO_ALL_TYPES)    \
  X(ExtremumReduce<kernels::MinOp>::Kernel, Min, HWARO_ALL_TYPES)

#define HWARO_SOFTMAX_KERNELS(X)                               \
  X(SoftmaxFamily<false>::Kernel, Softmax, HWARO_FLOAT_TYPES)  \
  X(SoftmaxFamily<true>::Kernel, LogSoftmax, HWARO_FLOAT_TYPES)

#define HWARO_INDEX_KERNELS(X)                             \
  X(IndexSelectKernel, IndexSelect, HWARO_ALL_TYPES)       \
  X(GatherKernel, Gather, HWARO_ALL_TYPES)                 \
  X(ScatterKernel, Scatter, HWARO_ALL_TYPES)               \
  X(ScatterAddKernel, ScatterAdd, HWARO_NUMERIC_TYPES)

#define HWARO_RANDOM_KERNELS(X)                        \
  X(UniformKernel, RandUniform, HWARO_FLOAT_TYPES)     \
  X(NormalKernel, RandNormal, HWARO_FLOAT_TYPES)       \
  X(RandIntKernel, RandInt, HWARO_ALL_TYPES)

#define HWARO_OPTIMIZER_KERNELS(X)         \
  X(AdamStepKernel, AdamStep, float, double) \
  X(SgdStepKernel, SgdStep, float, double)

#define HWARO_WINDOW_KERNELS(X)                      \
  X(Im2colKernel, Im2col, HWARO_FLOAT_TYPES)         \
  X(Col2imKernel, Col2im, HWARO_FLOAT_TYPES)         \
  X(MaxPool2dKernel, MaxPool2d, HWARO_FLOAT_TYPES)
