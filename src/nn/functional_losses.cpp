// functional: the losses. Each is written from differentiable ops, so autograd derives its
// gradient; targets are validated before anything runs.
#include <cmath>
#include <vector>

#include "hwaro/nn/functional.h"
#include "hwaro/ops.h"
#include "nn/compute_dtype.h"
#include "ops/op_helpers.h"

namespace hwaro::nn::functional {

namespace {

void check_not_batch_mean(const char* op, Reduction reduction) {
  HWARO_CHECK(reduction != Reduction::BatchMean, op, ": Reduction::BatchMean is only for kl_div (PyTorch's ",
              "'batchmean'); use Reduction::Mean, Sum or None");
}

Tensor reduce(const char* op, const Tensor& loss, Reduction reduction) {
  check_not_batch_mean(op, reduction);
  switch (reduction) {
    case Reduction::Mean: return loss.mean();
    case Reduction::Sum: return loss.sum();
    case Reduction::None: return loss;
    case Reduction::BatchMean: break;  // rejected above
  }
  return loss;
}

// [N, C, d1, ...] -> [N * d1 * ..., C] and target [N, d1, ...] -> [N * d1 * ...].
std::pair<Tensor, Tensor> flatten_classes(const char* op, const Tensor& scores, const Tensor& target) {
  HWARO_CHECK(scores.dim() >= 1, op, ": input must have a class dimension, got shape ", scores.sizes());
  HWARO_CHECK(target.dtype() == kInt64 || target.dtype() == kInt32, op, ": expected class indices of dtype int64 ",
              "as target, got ", target.dtype(), "; convert with .to(hw::kInt64)");
  if (scores.dim() == 1) {
    HWARO_CHECK(target.dim() == 0, op, ": a 1-D input (one sample) needs a 0-D target, got shape ", target.sizes());
    return {scores.unsqueeze(0), target.reshape({1})};
  }
  std::vector<std::int64_t> expected;
  expected.push_back(scores.size(0));
  for (std::int64_t d = 2; d < scores.dim(); ++d) expected.push_back(scores.size(d));
  HWARO_CHECK(target.sizes() == IntArrayRef(expected), op, ": target of shape ", target.sizes(), " does not match input ",
              scores.sizes(), " (expected target shape ", IntArrayRef(expected), ")");
  if (scores.dim() == 2) return {scores, target};
  std::vector<std::int64_t> order{0};
  for (std::int64_t d = 2; d < scores.dim(); ++d) order.push_back(d);
  order.push_back(1);
  return {scores.permute(order).reshape({-1, scores.size(1)}), target.reshape({-1})};
}

// -log_probs[i, target[i]] weighted, with ignored targets contributing 0 (and not counted).
Tensor nll(const char* op, const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options,
           const Tensor& original_target) {
  const std::int64_t classes = log_probs.size(1);
  const Tensor t = target.to(kInt64);
  const Tensor counted = t != options.ignore_index;
  if (t.numel() > 0) {
    const Tensor valid_targets = where(counted, t, 0);
    const std::int64_t lo = valid_targets.min().item<std::int64_t>(), hi = valid_targets.max().item<std::int64_t>();
    HWARO_CHECK(lo >= 0 && hi < classes, op, ": target ", lo < 0 ? lo : hi, " is out of bounds for ", classes,
                " classes (targets must be in [0, ", classes, ") or be ignore_index, ", options.ignore_index,
                ")");
  }
  const Tensor safe = where(counted, t, 0).unsqueeze(1);
  Tensor picked = -log_probs.gather(1, safe).squeeze(1);
  Tensor weight = counted.to(log_probs.dtype());
  if (options.weight.defined()) {
    HWARO_CHECK(options.weight.dim() == 1 && options.weight.size(0) == classes, op, ": weight must have shape [",
                classes, "], got ", options.weight.sizes());
    weight = weight * options.weight.to(log_probs.dtype()).index_select(0, safe.squeeze(1));
  }
  Tensor loss = picked * weight;
  if (options.label_smoothing > 0.0) {
    // PyTorch's smoothing: (1 - e) * nll + e * mean over classes of -log p (weighted likewise).
    const double e = options.label_smoothing;
    Tensor smooth = options.weight.defined()
                        ? -(log_probs * options.weight.to(log_probs.dtype())).sum({1}) / static_cast<double>(classes)
                        : -log_probs.mean({1});
    smooth = smooth * counted.to(log_probs.dtype());
    loss = loss * (1.0 - e) + smooth * e;
  }
  switch (options.reduction) {
    case Reduction::Mean: return loss.sum() / weight.sum();
    case Reduction::Sum: return loss.sum();
    case Reduction::None: return loss.reshape(original_target.dim() == 0 ? IntArrayRef{} : original_target.sizes());
    case Reduction::BatchMean: break;  // rejected on entry
  }
  return loss;
}

// PyTorch's class-probability targets (a target of the input's shape): -sum over classes of
// weight * target * log_softmax, the target first smoothed towards the uniform distribution. The
// mean is over the samples (N * d1 * ...), not over their weights as with class indices.
Tensor probability_target_loss(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options) {
  HWARO_CHECK(target.sizes() == logits.sizes(), "cross_entropy: a floating point target holds class probabilities ",
              "and must have the input's shape ", logits.sizes(), ", got ", target.sizes(),
              "; class indices are int64 of shape [N] (or [N, d1, ...])");
  HWARO_CHECK(logits.dim() >= 1, "cross_entropy: input must have a class dimension, got shape ", logits.sizes());
  HWARO_CHECK(options.ignore_index < 0, "cross_entropy: ignore_index (", options.ignore_index,
              ") is not supported for class-probability targets");
  const std::int64_t class_dim = logits.dim() == 1 ? 0 : 1, classes = logits.size(class_dim);
  Tensor t = target.to(logits.dtype());
  if (options.label_smoothing > 0.0) {
    t = t * (1.0 - options.label_smoothing) + options.label_smoothing / static_cast<double>(classes);
  }
  Tensor terms = logits.log_softmax(class_dim) * t;
  if (options.weight.defined()) {
    HWARO_CHECK(options.weight.dim() == 1 && options.weight.size(0) == classes, "cross_entropy: weight must have shape [",
                classes, "], got ", options.weight.sizes());
    std::vector<std::int64_t> along_classes(static_cast<std::size_t>(logits.dim()), 1);
    along_classes[static_cast<std::size_t>(class_dim)] = classes;
    terms = terms * options.weight.to(logits.dtype()).reshape(along_classes);
  }
  return reduce("cross_entropy", -terms.sum({class_dim}), options.reduction);
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options) {
  ops::check_same_device_where_defined("nll_loss", {{"input", log_probs}, {"target", target}, {"weight", options.weight}});
  HWARO_CHECK(log_probs.is_floating_point(), "nll_loss: expected floating point log-probabilities, got ",
              log_probs.dtype());
  check_not_batch_mean("nll_loss", options.reduction);
  auto [scores, t] = flatten_classes("nll_loss", log_probs, target);
  return nll("nll_loss", scores, t, options, target);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options) {
  HWARO_CHECK(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0,
              "cross_entropy: label_smoothing must be in [0, 1], got ", options.label_smoothing);
  HWARO_CHECK(logits.is_floating_point(), "cross_entropy: expected floating point logits, got ", logits.dtype());
  ops::check_same_device_where_defined("cross_entropy", {{"input", logits}, {"target", target}, {"weight", options.weight}});
  check_not_batch_mean("cross_entropy", options.reduction);
  if (target.is_floating_point()) return probability_target_loss(logits, target, options);
  auto [scores, t] = flatten_classes("cross_entropy", logits, target);
  return nll("cross_entropy", scores.log_softmax(1), t, options, target);
}

namespace {
// Also the devices, first: a loss's steps must not run on half of its arguments.
void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  ops::check_same_device_where_defined(op, {{"input", input}, {"target", target}});
  HWARO_CHECK(input.sizes() == target.sizes(), op, ": input of shape ", input.sizes(), " and target of shape ",
              target.sizes(), " differ; broadcasting them is usually a bug (e.g. [N, 1] against [N]): reshape one");
}
// As PyTorch's in-place products: a per-element factor broadcasts to the input's shape and never
// widens it (weight [N, 1] against logits [N] would make an [N, N] loss and a wrong mean).
void check_broadcasts_to(const char* op, const char* what, const Tensor& factor, const Tensor& input) {
  bool fits = factor.dim() <= input.dim();
  for (std::int64_t i = 1; fits && i <= factor.dim(); ++i) {
    fits = factor.size(-i) == 1 || factor.size(-i) == input.size(-i);
  }
  HWARO_CHECK(fits, op, ": ", what, " of shape ", factor.sizes(), " does not broadcast to the input's shape ",
              input.sizes());
}

// log(p) clamped at -100, as PyTorch's binary_cross_entropy takes it, with a gradient of 0 where p
// is 0 (a sigmoid that saturated) rather than 0 * (1 / 0) = NaN.
Tensor clamped_log(const Tensor& p) {
  const Tensor positive = p > 0.0;
  return where(positive, where(positive, p, 1.0).log().clamp(-100.0), -100.0);
}
// log(1 - p), clamped as clamped_log, taken as log1p(-p) as PyTorch's kernel takes it: for p = 1e-8
// it is -1e-8, where 1 - p rounds to 1 in float32.
Tensor clamped_log_one_minus(const Tensor& p) {
  const Tensor below_one = p < 1.0;
  return where(below_one, (-where(below_one, p, 0.0)).log1p().clamp(-100.0), -100.0);
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape("mse_loss", input, target);
  const Tensor diff = input - target;
  return reduce("mse_loss", diff * diff, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape("l1_loss", input, target);
  return reduce("l1_loss", (input - target).abs(), reduction);
}

// The quadratic branch squares the difference itself rather than |d|, so that its gradient, d / beta,
// does not pass through abs's kink at 0; each branch is finite everywhere, so where() passes no NaN back.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_same_shape("smooth_l1_loss", input, target);
  HWARO_CHECK(beta >= 0.0, "smooth_l1_loss: beta must be >= 0 (0 is l1_loss), got ", beta);
  if (beta == 0.0) return reduce("smooth_l1_loss", (input - target).abs(), reduction);  // as PyTorch: l1
  const Tensor diff = input - target;
  const Tensor dist = diff.abs();
  return reduce("smooth_l1_loss", where(dist < beta, diff * diff * (0.5 / beta), dist - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  check_same_shape("huber_loss", input, target);
  HWARO_CHECK(delta > 0.0, "huber_loss: delta must be > 0, got ", delta);
  const Tensor diff = input - target;
  const Tensor dist = diff.abs();
  return reduce("huber_loss", where(dist < delta, diff * diff * 0.5, (dist - 0.5 * delta) * delta), reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  check_same_shape("kl_div", input, target);
  HWARO_CHECK(input.is_floating_point(), "kl_div: expected floating point log-probabilities as input, got ",
              input.dtype());
  HWARO_CHECK(target.is_floating_point(), "kl_div: expected a floating point target (", log_target ? "log-" : "",
              "probabilities), got ", target.dtype(), " (PyTorch's kl_div refuses integral inputs too)");
  Tensor pointwise;
  if (log_target) {
    pointwise = target.exp() * (target - input);
  } else {
    // xlogy's convention, 0 * log 0 = 0: the log sees 1 where the target is 0, and where() gives
    // those elements 0 and no gradient. A negative target still gives NaN, as PyTorch's. Unlike
    // PyTorch's xlogy(t, t) - t * input, a zero target's term is absent even where the input is
    // -inf (PyTorch: 0 * -inf = NaN) and its target gradient is 0 (PyTorch: xlogy's 0 / 0 = NaN).
    const Tensor zero = target == 0.0;
    pointwise = where(zero, 0.0, target * (where(zero, 1.0, target).log() - input));
  }
  if (reduction != Reduction::BatchMean) return reduce("kl_div", pointwise, reduction);
  const Tensor sum = pointwise.sum();
  return input.dim() == 0 ? sum : sum / static_cast<double>(input.size(0));
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction reduction,
                                        const Tensor& pos_weight, const Tensor& weight) {
  const char* op = "binary_cross_entropy_with_logits";
  ops::check_same_device_where_defined(op, {{"input", logits}, {"target", target}, {"weight", weight},
                                            {"pos_weight", pos_weight}});
  check_same_shape(op, logits, target);
  HWARO_CHECK(logits.is_floating_point(), op, ": expected floating point logits, got ", logits.dtype());
  if (pos_weight.defined()) check_broadcasts_to(op, "pos_weight", pos_weight, logits);
  if (weight.defined()) check_broadcasts_to(op, "weight", weight, logits);
  // loss = (1 - y) x + (1 + (w - 1) y) * log(1 + e^-x). log(1 + e^-x) = m + log(e^-m + e^(-x-m)) for
  // any m; with m = max(-x, 0) no exp overflows, and the log is taken as log1p(expm1(-m) + e^(-x-m)),
  // as PyTorch's log_sigmoid takes log1p: for x = 20 it is 2.06e-9, where 1 + e^-20 rounds to 1 in
  // float32. The value does not depend on m, so m carries no gradient and the one through x is
  // -sigmoid(-x) everywhere, x = 0 included.
  const Tensor y = target.to(logits.dtype());
  const Tensor m = (-logits).clamp(0.0).detach();
  const Tensor log1p_exp = m + ((-m).expm1() + (-logits - m).exp()).log1p();
  const Tensor scale = pos_weight.defined() ? (pos_weight - 1) * y + 1 : ones_like(y);
  const Tensor loss = (1 - y) * logits + scale * log1p_exp;
  return reduce(op, weight.defined() ? loss * weight : loss, reduction);
}

Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, Reduction reduction, const Tensor& weight) {
  const char* op = "binary_cross_entropy";
  ops::check_same_device_where_defined(op, {{"input", probs}, {"target", target}, {"weight", weight}});
  check_same_shape(op, probs, target);
  HWARO_CHECK(probs.is_floating_point(), op, ": expected floating point probabilities, got ", probs.dtype());
  if (weight.defined()) check_broadcasts_to(op, "weight", weight, probs);
  HWARO_CHECK(((probs >= 0.0) && (probs <= 1.0)).all().item<bool>(), op,
              ": all elements of input should be between 0 and 1 (probabilities, as sigmoid gives); for logits use ",
              "binary_cross_entropy_with_logits, which is also the numerically stable form");
  HWARO_CHECK(((target >= 0.0) && (target <= 1.0)).all().item<bool>(), op,
              ": all elements of target should be between 0 and 1 (the probability of the positive class)");
  // 16-bit probabilities are computed in float32, where 1e-12 and the slope near saturation fit
  // (in float16 1e-12 is 0 and the slope overflows, and 0 * inf would make the loss NaN).
  const Tensor q = probs.to(compute_dtype(probs.dtype()));
  const Tensor y = target.to(q.dtype());
  const Tensor p = q.detach();
  // The value is the clamped formula's. The probabilities' gradient is PyTorch's closed form
  // (p - y) / max(p (1 - p), 1e-12), not the derivative of the clamped logs: at a saturated p
  // (exactly 0 or 1) the clamp would pass none of the y log p term, and the gradient would point
  // further into saturation (+0.7 at p = 0, y = 0.3, where PyTorch's is -3e11). (q - p) is 0
  // and carries that gradient; the target's is the clamped logs' difference. Not twice differentiable.
  const Tensor value = -(y * clamped_log(p) + (1 - y) * clamped_log_one_minus(p));
  const Tensor slope = ((p - y) / (p * (1 - p)).clamp(1e-12)).detach();
  const Tensor wide_loss = value + (q - p) * slope;
  const Tensor loss = wide_loss.to(probs.dtype());
  return reduce(op, weight.defined() ? loss * weight : loss, reduction);
}

}  // namespace hwaro::nn::functional
