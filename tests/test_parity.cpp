// Parity: every op on every available backend against the CPU (ARCHITECTURE.md, tests/parity).
// Each case makes fresh random inputs on the CPU, runs the op there, moves the inputs to the
// device under test, runs the op again and compares the values. The test backend ("test:1")
// is always in the list, so the suite runs everywhere; each CUDA device joins when present.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

using Inputs = std::vector<hw::Tensor>;

struct ParityCase {
  std::string name;
  std::function<Inputs(std::mt19937_64&)> make_inputs;  // on the CPU
  std::function<hw::Tensor(const Inputs&)> op;
  // Multiplies the result dtype's tolerance: a reduction over n terms may round differently on
  // a device that adds in another order, by up to about n ulps.
  double tol_scale = 1.0;
};

// Integral values are drawn from [lo, hi] inclusive (random_tensor's integer draw includes hi),
// so index ranges below pass hi = size - 1.
hw::Tensor rnd(hw::IntArrayRef sizes, std::mt19937_64& rng, double lo = -2.0, double hi = 2.0,
               hw::DType dtype = hw::kFloat32) {
  return hw::test::random_tensor(sizes, dtype, rng, lo, hi);
}

// An int64 [rows, cols] index whose every column is a permutation of 0..rows-1, so scatter
// writes each position once (duplicate targets would make scatter's result order-dependent).
hw::Tensor column_permutations(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(rows * cols));
  std::vector<std::int64_t> column(static_cast<std::size_t>(rows));
  for (std::int64_t c = 0; c < cols; ++c) {
    std::iota(column.begin(), column.end(), 0);
    std::shuffle(column.begin(), column.end(), rng);
    for (std::int64_t r = 0; r < rows; ++r) values[static_cast<std::size_t>(r * cols + c)] = column[static_cast<std::size_t>(r)];
  }
  return hw::tensor(values, {rows, cols});
}

// in[0] as a parameter after three steps of Opt with gradients in[1], 2 * in[1], 3 * in[1].
template <typename Opt, typename Options> hw::Tensor optimizer_steps(const Inputs& in, const Options& options) {
  hw::Tensor p = in[0].clone().set_requires_grad(true);
  Opt optimizer({p}, options);
  for (int step = 1; step <= 3; ++step) {
    p.mutable_grad() = in[1] * static_cast<double>(step);
    optimizer.step();
  }
  return p.detach();
}

// A group of parameters in[0..n/2) with gradients in[n/2..n), stepped as one group (a multi-tensor
// launch) three times with gradients g, 2g, 3g; the parameters after, flattened and joined.
template <typename Opt, typename Options> hw::Tensor optimizer_group_steps(const Inputs& in, const Options& options) {
  const std::size_t n = in.size() / 2;
  std::vector<hw::Tensor> params;
  for (std::size_t k = 0; k < n; ++k) params.push_back(in[k].clone().set_requires_grad(true));
  Opt optimizer(params, options);
  for (int step = 1; step <= 3; ++step) {
    for (std::size_t k = 0; k < n; ++k) params[k].mutable_grad() = in[n + k] * static_cast<double>(step);
    optimizer.step();
  }
  std::vector<hw::Tensor> flat;
  for (const hw::Tensor& p : params) flat.push_back(p.detach().flatten());
  return hw::cat(flat);
}

std::vector<ParityCase> make_cases() {
  using R = std::mt19937_64;
  const auto one = [](std::vector<std::int64_t> sizes, double lo = -2.0, double hi = 2.0,
                      hw::DType dtype = hw::kFloat32) {
    return [=](R& rng) { return Inputs{rnd(sizes, rng, lo, hi, dtype)}; };
  };
  const auto two = [](std::vector<std::int64_t> a, std::vector<std::int64_t> b, double lo = -2.0, double hi = 2.0) {
    return [=](R& rng) { return Inputs{rnd(a, rng, lo, hi), rnd(b, rng, lo, hi)}; };
  };
  // The same values laid out with gaps, to exercise every backend's strided path (MatchesCpu
  // lays the device's copy out with the same gaps, since to(device) alone would make it contiguous).
  const auto strided = [](std::vector<std::int64_t> sizes, double lo = -2.0, double hi = 2.0) {
    return [=](R& rng) { return Inputs{hw::test::non_contiguous_copy(rnd(sizes, rng, lo, hi))}; };
  };
  const auto bools = [](std::vector<std::int64_t> a, std::vector<std::int64_t> b) {
    return [=](R& rng) { return Inputs{rnd(a, rng, 0, 2, hw::kBool), rnd(b, rng, 0, 2, hw::kBool)}; };
  };

  std::vector<ParityCase> cases = {
      // ---- creation-like ----
      {"zeros_like", one({3, 4}), [](const Inputs& in) { return hw::zeros_like(in[0]); }},
      {"full_like", one({3, 4}), [](const Inputs& in) { return hw::full_like(in[0], 2.5); }},
      // ---- views made contiguous ----
      {"transpose_contiguous", one({4, 5, 3}), [](const Inputs& in) { return in[0].transpose(0, 2).contiguous(); }},
      {"permute_contiguous", one({2, 3, 4}), [](const Inputs& in) { return in[0].permute({2, 0, 1}).contiguous(); }},
      {"narrow_contiguous", one({6, 5}), [](const Inputs& in) { return in[0].narrow(1, 1, 3).contiguous(); }},
      {"expand_clone", one({3, 1}), [](const Inputs& in) { return in[0].expand({2, 3, 4}).clone(); }},
      // ---- elementwise unary ----
      {"neg", one({5, 7}), [](const Inputs& in) { return hw::neg(in[0]); }},
      {"abs", one({5, 7}), [](const Inputs& in) { return hw::abs(in[0]); }},
      {"abs_int64", one({5, 7}, -50, 50, hw::kInt64), [](const Inputs& in) { return hw::abs(in[0]); }},
      {"exp", one({5, 7}), [](const Inputs& in) { return hw::exp(in[0]); }},
      {"exp_int32_promotes", one({5, 7}, -5, 5, hw::kInt32), [](const Inputs& in) { return hw::exp(in[0]); }},
      {"log", one({5, 7}, 0.1, 5.0), [](const Inputs& in) { return hw::log(in[0]); }},
      {"expm1", one({5, 7}, -3, 3), [](const Inputs& in) { return hw::expm1(in[0]); }},
      {"log1p", one({5, 7}, -0.9, 5.0), [](const Inputs& in) { return hw::log1p(in[0]); }},
      {"expm1_bfloat16", one({5, 7}, -2, 2, hw::kBFloat16), [](const Inputs& in) { return hw::expm1(in[0]); }},
      {"log1p_bfloat16", one({5, 7}, -0.5, 4.0, hw::kBFloat16), [](const Inputs& in) { return hw::log1p(in[0]); }},
      {"sqrt", one({5, 7}, 0.0, 5.0), [](const Inputs& in) { return hw::sqrt(in[0]); }},
      {"rsqrt", one({5, 7}, 0.1, 5.0), [](const Inputs& in) { return hw::rsqrt(in[0]); }},
      {"tanh", one({5, 7}), [](const Inputs& in) { return hw::tanh(in[0]); }},
      {"sigmoid", one({5, 7}, -8, 8), [](const Inputs& in) { return hw::sigmoid(in[0]); }},
      {"relu", one({5, 7}), [](const Inputs& in) { return hw::relu(in[0]); }},
      {"gelu_erf", one({5, 7}, -4, 4), [](const Inputs& in) { return hw::gelu(in[0]); }},
      {"gelu_tanh", one({5, 7}, -4, 4), [](const Inputs& in) { return hw::gelu(in[0], true); }},
      {"silu", one({5, 7}, -6, 6), [](const Inputs& in) { return hw::silu(in[0]); }},
      {"clamp", one({5, 7}), [](const Inputs& in) { return hw::clamp(in[0], -0.5, 1.0); }},
      {"exp_float64", one({5, 7}, -2, 2, hw::kFloat64), [](const Inputs& in) { return hw::exp(in[0]); }},
      {"tanh_bfloat16", one({5, 7}, -2, 2, hw::kBFloat16), [](const Inputs& in) { return hw::tanh(in[0]); }},
      {"sigmoid_float16", one({5, 7}, -4, 4, hw::kFloat16), [](const Inputs& in) { return hw::sigmoid(in[0]); }},
      {"exp_strided", strided({6, 5}), [](const Inputs& in) { return hw::exp(in[0]); }},
      {"relu_transposed", one({4, 6}), [](const Inputs& in) { return hw::relu(in[0].t()); }},
      // ---- binary, with broadcasting ----
      {"add_alpha_broadcast", two({4, 1, 3}, {5, 3}), [](const Inputs& in) { return hw::add(in[0], in[1], 0.5); }},
      {"sub_broadcast", two({4, 5}, {5}), [](const Inputs& in) { return hw::sub(in[0], in[1]); }},
      {"mul_broadcast", two({3, 1}, {1, 4}), [](const Inputs& in) { return hw::mul(in[0], in[1]); }},
      {"div", [](R& rng) { return Inputs{rnd({4, 5}, rng), rnd({4, 5}, rng, 0.5, 3.0)}; },
       [](const Inputs& in) { return hw::div(in[0], in[1]); }},
      {"pow", [](R& rng) { return Inputs{rnd({4, 5}, rng, 0.5, 2.0), rnd({4, 5}, rng, -2.0, 2.0)}; },
       [](const Inputs& in) { return hw::pow(in[0], in[1]); }},
      {"pow_scalar", one({4, 5}, 0.1, 3.0), [](const Inputs& in) { return hw::pow(in[0], 1.5); }},
      {"maximum_broadcast", two({4, 5}, {1, 5}), [](const Inputs& in) { return hw::maximum(in[0], in[1]); }},
      {"minimum", two({4, 5}, {4, 5}), [](const Inputs& in) { return hw::minimum(in[0], in[1]); }},
      {"add_mixed_dtypes", [](R& rng) { return Inputs{rnd({4, 5}, rng, -9, 9, hw::kInt32), rnd({5}, rng)}; },
       [](const Inputs& in) { return hw::add(in[0], in[1]); }},
      {"mul_strided", [](R& rng) {
         return Inputs{hw::test::non_contiguous_copy(rnd({4, 5}, rng)), hw::test::non_contiguous_copy(rnd({4, 5}, rng))};
       },
       [](const Inputs& in) { return hw::mul(in[0], in[1]); }},
      {"where_broadcast",
       [](R& rng) { return Inputs{rnd({4, 1}, rng, 0, 2, hw::kBool), rnd({4, 5}, rng), rnd({5}, rng)}; },
       [](const Inputs& in) { return hw::where(in[0], in[1], in[2]); }},
      // Integer-valued floats in a small range so that equal elements actually occur.
      {"eq", two({4, 5}, {5}, -2, 2), [](const Inputs& in) { return hw::eq(in[0].to(hw::kInt32), in[1].to(hw::kInt32)); }},
      {"ne", two({4, 5}, {4, 5}, -2, 2), [](const Inputs& in) { return hw::ne(in[0].to(hw::kInt32), in[1].to(hw::kInt32)); }},
      {"lt", two({4, 5}, {4, 1}), [](const Inputs& in) { return hw::lt(in[0], in[1]); }},
      {"le", two({4, 5}, {4, 5}), [](const Inputs& in) { return hw::le(in[0], in[1]); }},
      {"gt", two({4, 5}, {5}), [](const Inputs& in) { return hw::gt(in[0], in[1]); }},
      {"ge", two({4, 5}, {4, 5}), [](const Inputs& in) { return hw::ge(in[0], in[1]); }},
      {"logical_not", one({4, 5}, 0, 2, hw::kBool), [](const Inputs& in) { return hw::logical_not(in[0]); }},
      {"logical_and", bools({4, 5}, {5}), [](const Inputs& in) { return hw::logical_and(in[0], in[1]); }},
      {"logical_or", bools({4, 5}, {4, 1}), [](const Inputs& in) { return hw::logical_or(in[0], in[1]); }},
      {"logical_xor", bools({4, 5}, {4, 5}), [](const Inputs& in) { return hw::logical_xor(in[0], in[1]); }},
      {"masked_fill_broadcast", [](R& rng) { return Inputs{rnd({4, 5}, rng), rnd({5}, rng, 0, 2, hw::kBool)}; },
       [](const Inputs& in) { return hw::masked_fill(in[0], in[1], -7.0); }},
      // ---- casts ----
      {"to_bfloat16", one({5, 7}, -100, 100), [](const Inputs& in) { return in[0].to(hw::kBFloat16); }},
      {"to_int32", one({5, 7}, -100, 100), [](const Inputs& in) { return in[0].to(hw::kInt32); }},
      {"to_float64_strided", strided({5, 7}), [](const Inputs& in) { return in[0].to(hw::kFloat64); }},
      // ---- reductions ----
      {"sum_dims", one({4, 6, 5}), [](const Inputs& in) { return hw::sum(in[0], {0, 2}); }, 20},
      {"sum_all", one({8, 16}), [](const Inputs& in) { return hw::sum(in[0]); }, 128},
      {"sum_int64_keepdim", one({4, 6}, -9, 9, hw::kInt64), [](const Inputs& in) { return hw::sum(in[0], {1}, true); }},
      {"sum_strided", strided({6, 5}), [](const Inputs& in) { return hw::sum(in[0], {0}); }, 6},
      {"mean", one({4, 6, 5}), [](const Inputs& in) { return hw::mean(in[0], {1}); }, 6},
      {"prod", one({4, 6}, 0.5, 1.5), [](const Inputs& in) { return in[0].prod(1); }, 6},
      {"max_dim_values", one({5, 7}), [](const Inputs& in) { return std::get<0>(in[0].max(1)); }},
      {"max_dim_indices", one({5, 7}), [](const Inputs& in) { return std::get<1>(in[0].max(1)); }},
      {"argmax", one({5, 7}), [](const Inputs& in) { return in[0].argmax(0); }},
      {"argmax_transposed", one({5, 7}), [](const Inputs& in) { return in[0].t().argmax(1); }},
      {"var", one({5, 8}), [](const Inputs& in) { return in[0].var({1}); }, 8},
      {"std_all", one({5, 8}), [](const Inputs& in) { return in[0].std(); }, 40},
      {"norm", one({5, 8}), [](const Inputs& in) { return in[0].norm(2, {1}); }, 8},
      {"logsumexp", one({5, 8}, -5, 5), [](const Inputs& in) { return hw::logsumexp(in[0], {1}); }, 8},
      {"all", one({5, 8}, 0, 1.2), [](const Inputs& in) { return (in[0] > 0.05).all(1); }},
      {"any", one({5, 8}), [](const Inputs& in) { return (in[0] > 1.8).any(0); }},
      {"softmax", one({5, 8}, -5, 5), [](const Inputs& in) { return hw::softmax(in[0], 1); }, 8},
      {"softmax_dim0_strided", strided({6, 5}, -5, 5), [](const Inputs& in) { return hw::softmax(in[0], 0); }, 6},
      {"log_softmax", one({5, 8}, -5, 5), [](const Inputs& in) { return hw::log_softmax(in[0], -1); }, 8},
      // ---- linear algebra ----
      {"mm", two({6, 8}, {8, 5}), [](const Inputs& in) { return hw::mm(in[0], in[1]); }, 8},
      {"mm_transposed", two({8, 6}, {5, 8}), [](const Inputs& in) { return hw::mm(in[0].t(), in[1].t()); }, 8},
      {"bmm", two({3, 4, 6}, {3, 6, 5}), [](const Inputs& in) { return hw::bmm(in[0], in[1]); }, 6},
      {"matmul_broadcast", two({2, 1, 4, 6}, {3, 6, 5}), [](const Inputs& in) { return hw::matmul(in[0], in[1]); }, 6},
      {"matmul_vector", two({4, 6}, {6}), [](const Inputs& in) { return hw::matmul(in[0], in[1]); }, 6},
      {"addmm", [](R& rng) { return Inputs{rnd({5}, rng), rnd({4, 6}, rng), rnd({6, 5}, rng)}; },
       [](const Inputs& in) { return hw::addmm(in[0], in[1], in[2], 0.5, 2.0); }, 12},
      {"mm_float64", [](R& rng) { return Inputs{rnd({6, 8}, rng, -2, 2, hw::kFloat64), rnd({8, 5}, rng, -2, 2, hw::kFloat64)}; },
       [](const Inputs& in) { return hw::mm(in[0], in[1]); }, 8},
      // ---- data movement ----
      {"cat", [](R& rng) { return Inputs{rnd({2, 3}, rng), rnd({4, 3}, rng), hw::test::non_contiguous_copy(rnd({1, 3}, rng))}; },
       [](const Inputs& in) { return hw::cat(in, 0); }},
      {"cat_dim1", two({3, 2}, {3, 4}), [](const Inputs& in) { return hw::cat(in, 1); }},
      {"stack", two({3, 4}, {3, 4}), [](const Inputs& in) { return hw::stack({in[0], in[1].t().t()}, 1); }},
      {"index_select", [](R& rng) { return Inputs{rnd({6, 4}, rng), rnd({5}, rng, 0, 5, hw::kInt64)}; },
       [](const Inputs& in) { return hw::index_select(in[0], 0, in[1]); }},
      {"index_select_strided", [](R& rng) {
         return Inputs{hw::test::non_contiguous_copy(rnd({4, 6}, rng)), rnd({3}, rng, 0, 5, hw::kInt64)};
       },
       [](const Inputs& in) { return hw::index_select(in[0], 1, in[1]); }},
      {"gather", [](R& rng) { return Inputs{rnd({4, 6}, rng), rnd({4, 3}, rng, 0, 5, hw::kInt64)}; },
       [](const Inputs& in) { return hw::gather(in[0], 1, in[1]); }},
      {"scatter", [](R& rng) { return Inputs{rnd({4, 5}, rng), column_permutations(4, 5, rng), rnd({4, 5}, rng)}; },
       [](const Inputs& in) { return hw::scatter(in[0], 0, in[1], in[2]); }},
      {"scatter_add", [](R& rng) { return Inputs{rnd({4, 5}, rng), rnd({6, 5}, rng, 0, 3, hw::kInt64), rnd({6, 5}, rng)}; },
       [](const Inputs& in) { return hw::scatter_add(in[0], 0, in[1], in[2]); }, 6},
      {"one_hot", one({7}, 0, 4, hw::kInt64), [](const Inputs& in) { return hw::one_hot(in[0], 5); }},
      // ---- fused optimiser steps (AdamStep, SgdStep): three steps with changing gradients ----
      {"adam_amsgrad_l2_steps", two({33, 7}, {33, 7}),
       [](const Inputs& in) {
         return optimizer_steps<hw::optim::Adam>(in, hw::optim::AdamOptions{.lr = 0.01, .weight_decay = 0.1, .amsgrad = true});
       }, 4},
      {"adamw_steps", two({1000}, {1000}),
       [](const Inputs& in) { return optimizer_steps<hw::optim::AdamW>(in, hw::optim::AdamWOptions{.lr = 0.01, .weight_decay = 0.1}); }, 4},
      // Sizes around a GPU block's share of a multi-tensor launch (1024 elements) and one element.
      {"adam_group_amsgrad_steps", [](R& rng) {
         Inputs in;
         for (int half = 0; half < 2; ++half) {
           for (std::int64_t size : {1, 1024, 1025, 5000}) in.push_back(rnd({size}, rng));
         }
         return in;
       },
       [](const Inputs& in) {
         return optimizer_group_steps<hw::optim::Adam>(in, hw::optim::AdamOptions{.lr = 0.01, .weight_decay = 0.1, .amsgrad = true});
       }, 4},
      {"sgd_group_steps", [](R& rng) {
         Inputs in;
         for (int half = 0; half < 2; ++half) {
           for (std::int64_t size : {3, 2048, 777}) in.push_back(rnd({size}, rng));
         }
         return in;
       },
       [](const Inputs& in) {
         return optimizer_group_steps<hw::optim::SGD>(in, hw::optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.1});
       }, 4},
      // maximize: the gradient negated in the fused kernel (and in the composite path on the CPU).
      {"adamw_group_maximize_steps", [](R& rng) {
         Inputs in;
         for (int half = 0; half < 2; ++half) {
           for (std::int64_t size : {1, 1025, 3000}) in.push_back(rnd({size}, rng));
         }
         return in;
       },
       [](const Inputs& in) {
         return optimizer_group_steps<hw::optim::AdamW>(
             in, hw::optim::AdamWOptions{.lr = 0.01, .weight_decay = 0.1, .amsgrad = true, .maximize = true});
       }, 4},
      {"sgd_group_maximize_steps", [](R& rng) {
         Inputs in;
         for (int half = 0; half < 2; ++half) {
           for (std::int64_t size : {3, 2048, 777}) in.push_back(rnd({size}, rng));
         }
         return in;
       },
       [](const Inputs& in) {
         return optimizer_group_steps<hw::optim::SGD>(
             in, hw::optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true, .maximize = true});
       }, 4},
      {"sgd_nesterov_steps", two({17, 3}, {17, 3}),
       [](const Inputs& in) {
         return optimizer_steps<hw::optim::SGD>(in, hw::optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
       }, 4},
      // ---- convolution and pooling (im2col, col2im, max pooling kernels; GEMMs through matmul) ----
      {"conv2d", [](R& rng) { return Inputs{rnd({2, 3, 9, 8}, rng), rnd({4, 3, 3, 3}, rng), rnd({4}, rng)}; },
       [](const Inputs& in) { return hw::nn::functional::conv2d(in[0], in[1], in[2], {1}, {1}); }, 27},
      {"conv2d_strided_dilated_groups", [](R& rng) {
         return Inputs{hw::test::non_contiguous_copy(rnd({2, 4, 11, 10}, rng)), rnd({6, 2, 3, 2}, rng)};
       },
       [](const Inputs& in) { return hw::nn::functional::conv2d(in[0], in[1], {}, {2, 1}, {1, 0}, {2, 3}, 2); }, 12},
      // The gradients of input and weight: col2im and the transposed GEMMs on the device.
      {"conv2d_backward", [](R& rng) { return Inputs{rnd({2, 3, 7, 6}, rng), rnd({4, 3, 3, 2}, rng), rnd({2, 4, 7, 6}, rng)}; },
       [](const Inputs& in) {
         const hw::Tensor x = in[0].detach().set_requires_grad(true), w = in[1].detach().set_requires_grad(true);
         (hw::nn::functional::conv2d(x, w, {}, {1}, {1, 1}, {1, 2}) * in[2]).sum().backward();
         return hw::cat({x.grad().flatten(), w.grad().flatten()});
       }, 60},
      // With a bias, groups and a stride: cuDNN's three backward passes where the build has it.
      {"conv2d_backward_bias_groups", [](R& rng) {
         return Inputs{rnd({2, 4, 9, 7}, rng), rnd({6, 2, 3, 3}, rng), rnd({6}, rng), rnd({2, 6, 5, 4}, rng)};
       },
       [](const Inputs& in) {
         const hw::Tensor x = in[0].detach().set_requires_grad(true), w = in[1].detach().set_requires_grad(true),
                          b = in[2].detach().set_requires_grad(true);
         (hw::nn::functional::conv2d(x, w, b, {2}, {1, 2}, {1, 2}, 2) * in[3]).sum().backward();
         return hw::cat({x.grad().flatten(), w.grad().flatten(), b.grad()});
       }, 60},
      {"im2col", one({2, 3, 7, 6}), [](const Inputs& in) { return hw::im2col(in[0], {3, 2}, {1, 2}, {1, 1}, {2, 1}); }},
      {"col2im", one({2, 3 * 6, 4 * 6}),
       [](const Inputs& in) { return hw::col2im(in[0], {7, 6}, {3, 2}, {1, 2}, {1, 1}, {2, 1}); }, 6},
      {"max_pool2d", one({2, 3, 9, 8}),
       [](const Inputs& in) {
         const auto [values, indices] = hw::max_pool2d_with_indices(in[0], {3, 2}, {2, 2}, {1, 1});
         return hw::cat({values.flatten(), indices.to(hw::kFloat32).flatten()});
       }},
      {"max_pool2d_backward", one({2, 3, 8, 8}),
       [](const Inputs& in) {
         const hw::Tensor x = in[0].detach().set_requires_grad(true);
         (hw::nn::functional::max_pool2d(x, {3}, {1}, {1}) * 1.5).sum().backward();
         return x.grad();
       }, 9},
      {"avg_pool2d", one({2, 3, 8, 7}), [](const Inputs& in) { return hw::nn::functional::avg_pool2d(in[0], {2, 3}, {2, 1}); }, 6},
      // ceil_mode's partial last windows; their divisors without count_include_pad.
      {"max_pool2d_ceil_mode", one({2, 3, 9, 8}),
       [](const Inputs& in) { return hw::nn::functional::max_pool2d(in[0], {3}, {2}, {1}, {1}, true); }},
      {"avg_pool2d_ceil_mode_exclude_pad", one({2, 3, 8, 7}),
       [](const Inputs& in) { return hw::nn::functional::avg_pool2d(in[0], {3, 2}, {2, 2}, {1, 1}, true, false); }, 6},
      {"adaptive_avg_pool2d", one({2, 3, 9, 7}),
       [](const Inputs& in) { return hw::nn::functional::adaptive_avg_pool2d(in[0], {4, 3}); }, 9},
      // ---- the composite activations and group_norm, forward and the input's gradient ----
      {"activations", one({6, 7}, -4, 4),
       [](const Inputs& in) {
         namespace F = hw::nn::functional;
         const hw::Tensor& x = in[0];
         return hw::cat({F::leaky_relu(x, 0.2), F::elu(x), F::selu(x), F::softplus(x, 2.0, 3.0), F::hardtanh(x),
                         F::relu6(x), F::normalize(x), F::hardsigmoid(x), F::hardswish(x), F::mish(x),
                         F::logsigmoid(x)});
       }},
      {"activations_grad", one({6, 7}, -4, 4),
       [](const Inputs& in) {
         namespace F = hw::nn::functional;
         const hw::Tensor x = in[0].detach().set_requires_grad(true);
         (F::elu(x) + F::softplus(x, 2.0, 3.0) + F::hardtanh(x) * 0.5 + F::normalize(x) * 3.0).sum().backward();
         return x.grad();
       }, 4},
      {"group_norm", [](R& rng) { return Inputs{rnd({2, 6, 3, 4}, rng), rnd({6}, rng), rnd({6}, rng)}; },
       [](const Inputs& in) { return hw::nn::functional::group_norm(in[0], 3, in[1], in[2]); }, 24},
  };
  return cases;
}

const std::vector<ParityCase>& cases() {
  static const std::vector<ParityCase> all = make_cases();
  return all;
}

// test:1 always (index 1, so it is not the test:0 that device-mismatch tests use), then every GPU.
std::vector<std::string> devices() {
  hw::test::other_device();  // registers the test backend
  std::vector<std::string> out = {hw::Device(hw::kTestDevice, 1).str()};
  for (int i = 0; i < hw::cuda::device_count(); ++i) out.push_back(hw::Device(hw::kCUDA, i).str());
  return out;
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> out(cases().size());
  std::iota(out.begin(), out.end(), std::size_t{0});
  return out;
}

class Parity : public ::testing::TestWithParam<std::tuple<std::size_t, std::string>> {};

TEST_P(Parity, MatchesCpu) {
  const ParityCase& c = cases()[std::get<0>(GetParam())];
  const hw::Device device(std::get<1>(GetParam()));
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", case " + c.name + " on " + device.str());
  std::mt19937_64 rng(seed);

  const Inputs cpu_inputs = c.make_inputs(rng);
  const hw::Tensor expected = c.op(cpu_inputs);
  ASSERT_TRUE(expected.is_cpu());

  // to(device) makes a contiguous copy, so an input made non-contiguous on the CPU is given the
  // same gaps again on the device: the device's op must see the strided layout the case is about.
  Inputs device_inputs;
  for (const hw::Tensor& t : cpu_inputs) {
    device_inputs.push_back(t.is_contiguous() ? t.to(device) : hw::test::non_contiguous_copy(t.to(device)));
    EXPECT_EQ(device_inputs.back().is_contiguous(), t.is_contiguous()) << "input " << device_inputs.size() - 1;
  }
  if (c.name.find("strided") != std::string::npos) {
    EXPECT_TRUE(std::any_of(device_inputs.begin(), device_inputs.end(), [](const hw::Tensor& t) { return !t.is_contiguous(); }))
        << "a strided case whose device inputs are all contiguous";
  }
  const hw::Tensor actual = c.op(device_inputs);

  EXPECT_EQ(actual.device(), device);
  EXPECT_EQ(actual.dtype(), expected.dtype());
  EXPECT_EQ(std::vector<std::int64_t>(actual.sizes().begin(), actual.sizes().end()),
            std::vector<std::int64_t>(expected.sizes().begin(), expected.sizes().end()));
  // The device's inputs are unchanged by the op (a backend writing into its inputs shows here).
  for (std::size_t i = 0; i < cpu_inputs.size(); ++i)
    EXPECT_EQ(hw::test::values_of(device_inputs[i]), hw::test::values_of(cpu_inputs[i])) << "input " << i;

  // Integer and bool results must be exact: rtol_for/atol_for are 0 for those dtypes.
  const double rtol = hw::test::rtol_for(expected.dtype()) * c.tol_scale;
  const double atol = hw::test::atol_for(expected.dtype()) * c.tol_scale;
  EXPECT_TRUE(hw::test::all_close(hw::test::values_of(actual), hw::test::values_of(expected), rtol, atol));
}

std::string parity_name(const ::testing::TestParamInfo<Parity::ParamType>& info) {
  std::string name = cases()[std::get<0>(info.param)].name + "_on_" + std::get<1>(info.param);
  std::replace(name.begin(), name.end(), ':', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllOps, Parity, ::testing::Combine(::testing::ValuesIn(case_indices()), ::testing::ValuesIn(devices())),
                         parity_name);

TEST(ParitySuite, CaseNamesAreUniqueAndCoverEnoughOps) {
  std::vector<std::string> names;
  for (const ParityCase& c : cases()) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_GE(names.size(), 40u);
}

TEST(ParitySuite, CudaDevicesRunWhenAGpuIsPresent) {
  if (hw::cuda::device_count() == 0)
    GTEST_SKIP() << "the CUDA parity cases need a GPU, and none is usable here: " << hw::cuda::unavailable_reason()
                 << "; only the test backend (test:1) was compared against the CPU";
  EXPECT_EQ(devices().size(), static_cast<std::size_t>(hw::cuda::device_count()) + 1);
}

}  // namespace
