#pragma once
// hw::nn::functional (torch.nn.functional): layers and losses as plain functions of tensors.
// Losses are numerically stable (log_softmax, not log(softmax); the log-sum-exp form of BCE).
#include <optional>

#include "hwaro/nn/padding.h"
#include "hwaro/tensor.h"

namespace hwaro::nn::functional {

// BatchMean is kl_div's alone (PyTorch's 'batchmean': the sum over the batch size, input.size(0));
// any other loss given it throws hw::Error.
enum class Reduction { Mean, Sum, None, BatchMean };

// y = x @ weight^T + bias; x [..., in], weight [out, in], bias [out] or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);
// The other activations of torch.nn.functional, with its defaults, formulas and gradients (at a
// kink, the gradient of the side PyTorch takes), for floating point inputs:
// leaky_relu: x > 0 ? x : negative_slope * x.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
// elu: x > 0 ? x : alpha * (e^x - 1); selu: its self-normalising scale * elu(x, alpha) with
// PyTorch's constants (scale 1.0507..., alpha 1.6733...).
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor selu(const Tensor& x);
// softplus: log(1 + e^(beta x)) / beta, and x itself where beta x > threshold. 16-bit floats are
// computed in float32 (e^20 is beyond float16).
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
// hardtanh: x clamped to [min_val, max_val]; the gradient passes strictly inside, as PyTorch's.
// relu6 is hardtanh(x, 0, 6).
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor relu6(const Tensor& x);
// hardsigmoid: 0 up to -3, x / 6 + 1/2, 1 from 3 (its gradient 1/6 strictly inside); hardswish:
// x * hardsigmoid(x), with PyTorch's gradient x / 3 + 1/2 on [-3, 3]; mish: x tanh(softplus(x));
// logsigmoid: log(sigmoid(x)) = -softplus(-x), finite for any x.
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor logsigmoid(const Tensor& x);
// x / max(||x||_p, eps) along dim (torch.nn.functional.normalize): unit rows by default.
Tensor normalize(const Tensor& x, double p = 2.0, std::int64_t dim = 1, double eps = 1e-12);
// Zeroes each element with probability p and scales the rest by 1/(1-p), when training.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

// ---- padding ----
// torch.nn.functional.pad's modes. Constant fills with a value; Reflect mirrors about the edge
// element without repeating it ([1, 2, 3] padded by 2 -> [3, 2, 1, 2, 3, 2, 1]); Replicate repeats
// the edge element; Circular wraps around (the elements from the other end).
enum class PadMode { Constant, Reflect, Replicate, Circular };
// torch.nn.functional.pad: `pad` holds (before, after) pairs from the last dim backwards, (left,
// right, top, bottom, front, back), e.g. pad(x, {1, 1, 2, 0}, PadMode::Reflect). A negative pad
// crops. As PyTorch: Constant pads any number of dims, with `value`; the other modes pad the last
// 1 to 3 dims of an input with one or two more dims ([C, *] or [N, C, *]) and take no value;
// Reflect needs each pad smaller than its dim, Circular at most its dim (after the other side's
// crop), Replicate a non-empty dim. Always a new tensor, differentiable, on the input's device.
Tensor pad(const Tensor& x, IntArrayRef pad, PadMode mode = PadMode::Constant, double value = 0.0);

// ---- convolution and pooling (input [N, C, H, W], or [C, H, W] for one image) ----
// Window sizes, strides, paddings and dilations take one value (both axes) or two (rows, cols).
// weight [out, in / groups, kh, kw], bias [out] or undefined. Output [N, out, oh, ow] with
// oh = (H + 2 * padding - dilation * (kh - 1) - 1) / stride + 1 (and ow likewise).
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, std::int64_t groups = 1);
// PyTorch's padding='same' / 'valid' (hwaro/nn/padding.h): Same keeps the height and width (stride 1
// only); with an even dilated kernel size the odd row or column of zeros goes after.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride, Padding padding,
              IntArrayRef dilation = {1}, std::int64_t groups = 1);
// Pooling: stride empty means the kernel size; padding at most half the kernel. ceil_mode rounds
// the output size up (a last, partial window covers what floor division leaves out, as long as it
// starts inside the input or its leading padding).
Tensor max_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
// The mean of each window. Its divisor, as PyTorch's: divisor_override if given; else the
// window's size within the padded input (count_include_pad, padding counted as zeros; a ceil_mode
// window's overhang past the padding is not counted); else the number of input elements it covers.
Tensor avg_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
// The mean over PyTorch's adaptive windows: output row i averages rows [floor(i*H/oh), ceil((i+1)*H/oh)).
Tensor adaptive_avg_pool2d(const Tensor& x, IntArrayRef output_size);

// ---- normalisation and embedding ----
// x [N, C] or [N, C, *]; statistics over every dim but 1. training: the batch's mean and biased
// variance normalise x, and running_mean/var (if defined, [C]) move by momentum towards the
// batch's mean and unbiased variance, in place; otherwise running_mean/var normalise x.
// weight, bias [C] or undefined.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, bool training = false, double momentum = 0.1, double eps = 1e-5);
// Normalises over the last normalized_shape.size() dims (which must equal normalized_shape);
// weight, bias of normalized_shape or undefined. Biased variance, as PyTorch.
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// Input [N, C, *]: the channels split into num_groups groups of C / num_groups, each sample's
// group normalised over its channels and positions (biased variance); weight and bias [C] or
// undefined (torch.nn.functional.group_norm).
Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// Rows of weight [num_embeddings, dim] picked by int64 indices of any shape -> [*indices, dim].
// padding_idx: that row gets no gradient (its output is still the row). max_norm, as PyTorch's:
// first each picked row whose norm_type-norm exceeds max_norm is scaled in place (outside
// autograd) by max_norm / (norm + 1e-7).
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<std::int64_t> padding_idx = std::nullopt,
                 std::optional<double> max_norm = std::nullopt, double norm_type = 2.0);

struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;
  std::int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  Tensor weight{};  // per-class weights [C], optional
};
// logits [N, C] (or [N, C, d1, ...]); target int64 class indices [N] (or [N, d1, ...]), or, as
// PyTorch, floating point class probabilities of the logits' shape.
// Class indices: the mean divides by the summed weights of the targets that count (not ignored),
// NaN when none does. Probabilities: no ignore_index; the mean is over the samples N * d1 * ...
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options = {});
// log_probs [N, C] (or [N, C, d1, ...]) as log_softmax gives; target class indices as cross_entropy's.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// torch.nn.functional.smooth_l1_loss: with z = |input - target|, 0.5 z^2 / beta where z < beta, else
// z - 0.5 beta. beta == 0 is l1_loss; a negative beta is an error.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
// torch.nn.functional.huber_loss: 0.5 z^2 where z < delta, else delta (z - 0.5 delta); that is
// delta * smooth_l1_loss with beta = delta. delta must be positive.
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);
// torch.nn.functional.kl_div: input holds log-probabilities, target probabilities (or, with
// log_target, log-probabilities), of the input's shape. Pointwise target * (log target - input),
// 0 where target is 0 (so a zero target gives neither NaN nor a gradient, even beside an input of
// -inf, a masked log_softmax, where PyTorch's gives NaN for both); with log_target,
// exp(target) * (target - input). Mean averages over every element, as PyTorch's 'mean';
// BatchMean (the KL divergence proper) divides the sum by input.size(0) (a 0-D input: the sum).
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
              bool log_target = false);
// sigmoid + binary cross entropy in one stable formula; target of input's shape, in [0, 1].
// pos_weight multiplies the positive term (per class, broadcast over the last dim); weight
// rescales each element's loss, before the reduction; both broadcast to the input's shape.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::Mean, const Tensor& pos_weight = {},
                                        const Tensor& weight = {});
// torch.nn.functional.binary_cross_entropy: probs in [0, 1] (sigmoid's output) and a target of
// their shape in [0, 1] (a value outside, or NaN, is an error); each log is clamped at -100, as
// PyTorch's, so that a probability of exactly 0 or 1 costs at most 100. The probabilities'
// gradient is PyTorch's w (p - y) / max(p (1 - p), 1e-12), also at a saturated p. weight as
// above. binary_cross_entropy_with_logits is the stable form.
Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                            const Tensor& weight = {});

}  // namespace hwaro::nn::functional
