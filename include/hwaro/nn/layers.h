#pragma once
// The basic layers: Linear, the activations, Flatten and Dropout. Each is an Impl class with
// its holder (hw::nn::Linear holds a shared hw::nn::LinearImpl), as in LibTorch.
#include "hwaro/nn/module.h"

namespace hwaro::nn {

struct LinearOptions {
  bool bias = true;
};

// y = x @ weight^T + bias; weight [out, in] and bias [out] initialised as PyTorch's
// (kaiming uniform with a = sqrt(5), bias uniform in +-1/sqrt(in)).
class LinearImpl : public Module {
 public:
  LinearImpl(std::int64_t in_features, std::int64_t out_features, LinearOptions options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();
  std::shared_ptr<Module> clone_module() const override {
    return std::make_shared<LinearImpl>(in_features, out_features, LinearOptions{.bias = bias.defined()});
  }

  std::int64_t in_features, out_features;
  Tensor weight, bias;
};
HWARO_MODULE(Linear);

// An elementwise function as a module (ReLU, GELU, SiLU, Tanh, Sigmoid, and the softmaxes).
class ReLUImpl : public Module {
 public:
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<ReLUImpl>(); }
  Tensor forward(const Tensor& input) override { return input.relu(); }
};
HWARO_MODULE(ReLU);

class GELUImpl : public Module {
 public:
  explicit GELUImpl(bool tanh_approximation = false) : tanh_approximation_(tanh_approximation) {}
  Tensor forward(const Tensor& input) override { return input.gelu(tanh_approximation_); }
  std::string extra_repr() const override { return tanh_approximation_ ? "approximate='tanh'" : ""; }
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<GELUImpl>(tanh_approximation_); }

 private:
  bool tanh_approximation_;
};
HWARO_MODULE(GELU);

class SiLUImpl : public Module {
 public:
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<SiLUImpl>(); }
  Tensor forward(const Tensor& input) override { return input.silu(); }
};
HWARO_MODULE(SiLU);

class TanhImpl : public Module {
 public:
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<TanhImpl>(); }
  Tensor forward(const Tensor& input) override { return input.tanh(); }
};
HWARO_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<SigmoidImpl>(); }
  Tensor forward(const Tensor& input) override { return input.sigmoid(); }
};
HWARO_MODULE(Sigmoid);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(std::int64_t dim) : dim_(dim) {}
  Tensor forward(const Tensor& input) override { return input.softmax(dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<SoftmaxImpl>(dim_); }

 private:
  std::int64_t dim_;
};
HWARO_MODULE(Softmax);

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(std::int64_t dim) : dim_(dim) {}
  Tensor forward(const Tensor& input) override { return input.log_softmax(dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<LogSoftmaxImpl>(dim_); }

 private:
  std::int64_t dim_;
};
HWARO_MODULE(LogSoftmax);

// The other activations (functional.h has the formulas): LeakyReLU, ELU, SELU, Softplus,
// Hardtanh, ReLU6, Hardsigmoid, Hardswish, Mish and LogSigmoid, with PyTorch's defaults.
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01) : negative_slope_(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<LeakyReLUImpl>(negative_slope_); }

 private:
  double negative_slope_;
};
HWARO_MODULE(LeakyReLU);

class ELUImpl : public Module {
 public:
  explicit ELUImpl(double alpha = 1.0) : alpha_(alpha) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<ELUImpl>(alpha_); }

 private:
  double alpha_;
};
HWARO_MODULE(ELU);

class SELUImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<SELUImpl>(); }
};
HWARO_MODULE(SELU);

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(double beta = 1.0, double threshold = 20.0);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<SoftplusImpl>(beta_, threshold_); }

 private:
  double beta_, threshold_;
};
HWARO_MODULE(Softplus);

class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(double min_val = -1.0, double max_val = 1.0);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<HardtanhImpl>(min_val_, max_val_); }

 private:
  double min_val_, max_val_;
};
HWARO_MODULE(Hardtanh);

class ReLU6Impl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<ReLU6Impl>(); }
};
HWARO_MODULE(ReLU6);

class HardsigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<HardsigmoidImpl>(); }
};
HWARO_MODULE(Hardsigmoid);

class HardswishImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<HardswishImpl>(); }
};
HWARO_MODULE(Hardswish);

class MishImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<MishImpl>(); }
};
HWARO_MODULE(Mish);

class LogSigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<LogSigmoidImpl>(); }
};
HWARO_MODULE(LogSigmoid);

// Returns its input (the same tensor): a placeholder where a model may or may not have a layer.
class IdentityImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override { return input; }
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<IdentityImpl>(); }
};
HWARO_MODULE(Identity);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(std::int64_t start_dim = 1, std::int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& input) override { return input.flatten(start_, end_); }
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<FlattenImpl>(start_, end_); }

 private:
  std::int64_t start_, end_;
};
HWARO_MODULE(Flatten);

// Zeroes elements with probability p while training (scaling the rest by 1/(1-p)); identity in eval().
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone_module() const override { return std::make_shared<DropoutImpl>(p_); }

 private:
  double p_;
};
HWARO_MODULE(Dropout);

}  // namespace hwaro::nn
