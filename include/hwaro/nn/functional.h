#pragma once
// hw::nn::functional (torch.nn.functional): layers and losses as plain functions of tensors.
// Losses are numerically stable (log_softmax, not log(softmax); the log-sum-exp form of BCE).
#include <optional>

#include "hwaro/tensor.h"

namespace hwaro::nn::functional {

enum class Reduction { Mean, Sum, None };

// y = x @ weight^T + bias; x [..., in], weight [out, in], bias [out] or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);
// Zeroes each element with probability p and scales the rest by 1/(1-p), when training.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;
  std::int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  Tensor weight{};  // per-class weights [C], optional
};
// logits [N, C] (or [N, C, d1, ...]); target int64 class indices [N] (or [N, d1, ...]).
// With ignore_index, the mean is over the targets that count.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options = {});
// log_probs [N, C] (or [N, C, d1, ...]) as log_softmax gives; target as cross_entropy's.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// sigmoid + binary cross entropy in one stable formula; target of input's shape, in [0, 1].
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::Mean, const Tensor& pos_weight = {});

}  // namespace hwaro::nn::functional
