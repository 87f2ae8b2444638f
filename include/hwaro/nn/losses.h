#pragma once
// Losses as modules (torch.nn.CrossEntropyLoss, ...): the functional forms with their options held.
#include "hwaro/nn/functional.h"
#include "hwaro/nn/module.h"

namespace hwaro::nn {

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(functional::CrossEntropyOptions options = {}) : options_(std::move(options)) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& logits, const Tensor& target) const {
    return functional::cross_entropy(logits, target, options_);
  }

 private:
  functional::CrossEntropyOptions options_;
};
HWARO_MODULE(CrossEntropyLoss);

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

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(functional::Reduction reduction = functional::Reduction::Mean) : reduction_(reduction) {}
  using Module::forward;  // the two-argument form below is the one a loss has
  Tensor forward(const Tensor& logits, const Tensor& target) const {
    return functional::binary_cross_entropy_with_logits(logits, target, reduction_);
  }

 private:
  functional::Reduction reduction_;
};
HWARO_MODULE(BCEWithLogitsLoss);

}  // namespace hwaro::nn
