#pragma once
// Losses as modules (torch.nn.CrossEntropyLoss, ...): the functional forms with their options held.
#include "hwaro/nn/functional.h"
#include "hwaro/nn/module.h"

namespace hwaro::nn {

namespace detail {
// The losses over class indices keep cross_entropy's options; the class weight is a buffer
// ("weight"), so that to(device) moves it with the module, as PyTorch's.
class ClassIndexLoss : public Module {
 protected:
  explicit ClassIndexLoss(functional::CrossEntropyOptions options) : options_(std::move(options)) {
    if (options_.weight.defined()) register_buffer("weight", options_.weight);
  }
  functional::CrossEntropyOptions options_;
};
}  // namespace detail

class CrossEntropyLossImpl : public detail::ClassIndexLoss {
 public:
  explicit CrossEntropyLossImpl(functional::CrossEntropyOptions options = {}) : ClassIndexLoss(std::move(options)) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& logits, const Tensor& target) const {
    return functional::cross_entropy(logits, target, options_);
  }
};
HWARO_MODULE(CrossEntropyLoss);

// torch.nn.NLLLoss: for log-probabilities (log_softmax's output); the options of cross_entropy.
class NLLLossImpl : public detail::ClassIndexLoss {
 public:
  explicit NLLLossImpl(functional::CrossEntropyOptions options = {}) : ClassIndexLoss(std::move(options)) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& log_probs, const Tensor& target) const {
    return functional::nll_loss(log_probs, target, options_);
  }
};
HWARO_MODULE(NLLLoss);

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(functional::Reduction reduction = functional::Reduction::Mean) : reduction_(reduction) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return functional::mse_loss(input, target, reduction_);
  }

 private:
  functional::Reduction reduction_;
};
HWARO_MODULE(MSELoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(functional::Reduction reduction = functional::Reduction::Mean) : reduction_(reduction) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& input, const Tensor& target) const { return functional::l1_loss(input, target, reduction_); }

 private:
  functional::Reduction reduction_;
};
HWARO_MODULE(L1Loss);

// torch.nn.SmoothL1Loss(reduction, beta): functional::smooth_l1_loss with its options held.
class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(functional::Reduction reduction = functional::Reduction::Mean, double beta = 1.0)
      : reduction_(reduction), beta_(beta) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return functional::smooth_l1_loss(input, target, reduction_, beta_);
  }

 private:
  functional::Reduction reduction_;
  double beta_;
};
HWARO_MODULE(SmoothL1Loss);

// torch.nn.HuberLoss(reduction, delta): functional::huber_loss with its options held.
class HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(functional::Reduction reduction = functional::Reduction::Mean, double delta = 1.0)
      : reduction_(reduction), delta_(delta) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return functional::huber_loss(input, target, reduction_, delta_);
  }

 private:
  functional::Reduction reduction_;
  double delta_;
};
HWARO_MODULE(HuberLoss);

// torch.nn.KLDivLoss(reduction, log_target): input log-probabilities; Reduction::BatchMean is the
// KL divergence proper (Mean, the default as PyTorch's, averages over every element).
class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(functional::Reduction reduction = functional::Reduction::Mean, bool log_target = false)
      : reduction_(reduction), log_target_(log_target) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& log_probs, const Tensor& target) const {
    return functional::kl_div(log_probs, target, reduction_, log_target_);
  }

 private:
  functional::Reduction reduction_;
  bool log_target_;
};
HWARO_MODULE(KLDivLoss);

// pos_weight (of the positive term, per class) and weight (of each element) are buffers, as
// functional::binary_cross_entropy_with_logits takes them.
class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(functional::Reduction reduction = functional::Reduction::Mean, Tensor pos_weight = {},
                                 Tensor weight = {})
      : reduction_(reduction), pos_weight_(std::move(pos_weight)), weight_(std::move(weight)) {
    if (weight_.defined()) register_buffer("weight", weight_);
    if (pos_weight_.defined()) register_buffer("pos_weight", pos_weight_);
  }
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& logits, const Tensor& target) const {
    return functional::binary_cross_entropy_with_logits(logits, target, reduction_, pos_weight_, weight_);
  }

 private:
  functional::Reduction reduction_;
  Tensor pos_weight_, weight_;
};
HWARO_MODULE(BCEWithLogitsLoss);

// torch.nn.BCELoss: for probabilities (sigmoid's output); weight (of each element) is a buffer.
class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(functional::Reduction reduction = functional::Reduction::Mean, Tensor weight = {})
      : reduction_(reduction), weight_(std::move(weight)) {
    if (weight_.defined()) register_buffer("weight", weight_);
  }
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& probs, const Tensor& target) const {
    return functional::binary_cross_entropy(probs, target, reduction_, weight_);
  }

 private:
  functional::Reduction reduction_;
  Tensor weight_;
};
HWARO_MODULE(BCELoss);

}  // namespace hwaro::nn
