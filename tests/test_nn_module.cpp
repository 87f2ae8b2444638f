// hw::nn::Module: registration, dotted names, modes, in-place moves that keep identity,
// state dicts (strict errors), the printout, and the device error that names the parameter.
#include <cmath>
#include <functional>
#include <sstream>

#include "support/module_fixtures.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace nn = hwaro::nn;

struct NetImpl : nn::Module {
  NetImpl() {
    encoder = register_module("encoder", Encoder());
    head = register_module("head", nn::Linear(4, 3));
  }
  Tensor forward(const Tensor& x) override { return head->forward(encoder->forward(x)); }
  Encoder encoder{nullptr};
  nn::Linear head{nullptr};
};
HWARO_MODULE(Net);

TEST(Module, NamedParametersUseDottedPathsInRegistrationOrder) {
  Net net;
  EXPECT_EQ(names_of(net->named_parameters()),
            (std::vector<std::string>{"encoder.fc1.weight", "encoder.fc1.bias", "encoder.fc2.weight", "head.weight",
                                      "head.bias"}));
  EXPECT_EQ(names_of(net->named_buffers()), (std::vector<std::string>{"encoder.running"}));
  EXPECT_EQ(net->parameters().size(), 5u);
  EXPECT_EQ(net->parameters(/*recurse=*/false).size(), 0u);
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->modules().size(), 5u);  // net, encoder, fc1, fc2, head
  EXPECT_EQ(net->encoder->fc2->path(), "encoder.fc2");
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(Module, LinearMatchesAFloat64Reference) {
  std::mt19937_64 rng(fresh_seed());
  nn::Linear fc(5, 3);
  const Tensor x = random_tensor({4, 5}, kFloat32, rng);
  const std::vector<double> xv = values_of(x), w = values_of(fc->weight), b = values_of(fc->bias);
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i) {
    for (int o = 0; o < 3; ++o) {
      double acc = b[o];
      for (int k = 0; k < 5; ++k) acc += xv[i * 5 + k] * w[o * 5 + k];
      expected.push_back(acc);
    }
  }
  EXPECT_TRUE(all_close(values_of(fc->forward(x)), expected, 1e-5, 1e-5));
  // A batch of sequences [2, 2, 5] goes through the same weights.
  EXPECT_TRUE(all_close(values_of(fc->forward(x.reshape({2, 2, 5}))), expected, 1e-5, 1e-5));
}

TEST(Module, LinearInitialisationIsPyTorchsDefault) {
  nn::Linear fc(400, 300);
  const double bound = 1.0 / std::sqrt(400.0);
  const std::vector<double> w = values_of(fc->weight);
  double lo = 1, hi = -1, sum_sq = 0;
  for (double v : w) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum_sq += v * v;
  }
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  // Uniform on [-b, b] has variance b^2 / 3; 120000 samples pin it to well within 2%.
  EXPECT_NEAR(sum_sq / static_cast<double>(w.size()), bound * bound / 3, 0.02 * bound * bound / 3);
}

TEST(Module, ToKeepsParameterIdentity) {
  Net net;
  std::vector<Tensor> held = net->parameters();  // as an optimiser holds them
  net->to(kFloat64);
  for (std::size_t i = 0; i < held.size(); ++i) {
    EXPECT_TRUE(held[i].is_same(net->parameters()[i]));
    EXPECT_EQ(held[i].dtype(), kFloat64);
    EXPECT_TRUE(held[i].requires_grad());
  }
  EXPECT_EQ(net->named_buffers()[0].second.dtype(), kFloat64);
  net->to(other_device());
  EXPECT_EQ(held[0].device(), other_device());
  EXPECT_EQ(net->device(), other_device());
}

TEST(Module, ToAnIntegerDTypeIsRefusedBeforeAnythingMoves) {
  Net net;
  EXPECT_TRUE(throws_with<Error>([&] { net->to(kInt64); }, "only accepts floating point"));
  for (const Tensor& p : net->parameters()) EXPECT_EQ(p.dtype(), kFloat32);
}

TEST(Module, ForwardOnAnotherDeviceNamesTheParameter) {
  Net net;
  net->to(other_device());
  const Tensor x = randn({2, 8});
  const std::string needle = "encoder.fc1.weight is on " + other_device().str() + ", input is on cpu";
  EXPECT_TRUE(throws_with<DeviceMismatchError>([&] { net->forward(x); }, needle));
}

// Every tensor a module holds is checked, not only its weight: a bias left behind, and a norm
// without affine parameters whose running statistics (buffers) are elsewhere.
TEST(Module, ForwardNamesABiasOrABufferOnAnotherDevice) {
  nn::Linear fc(8, 3);
  {
    NoGradGuard no_grad;
    fc->bias.set_data(fc->bias.to(other_device()));
  }
  EXPECT_TRUE(throws_with<DeviceMismatchError>([&] { fc->forward(randn({2, 8})); },
                                               "bias is on " + other_device().str() + ", input is on cpu"));
  nn::BatchNorm2d norm(nn::BatchNormOptions(3).affine(false));
  norm->to(other_device());
  EXPECT_TRUE(throws_with<DeviceMismatchError>([&] { norm->forward(randn({2, 3, 4, 4})); },
                                               "running_mean is on " + other_device().str() + ", input is on cpu"));
}

TEST(Module, TrainAndEvalReachEveryChild) {
  Net net;
  EXPECT_TRUE(net->encoder->fc1->is_training());
  net->eval();
  EXPECT_FALSE(net->encoder->fc1->is_training());
  net->train();
  EXPECT_TRUE(net->head->is_training());
}

TEST(Module, ZeroGradClearsOrZeroes) {
  Net net;
  net->forward(randn({3, 8})).sum().backward();
  for (const Tensor& p : net->parameters()) ASSERT_TRUE(p.grad().defined());
  net->zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : net->parameters()) EXPECT_EQ(p.grad().abs().sum().item<double>(), 0.0);
  net->zero_grad();
  for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Module, StateDictRoundTripsIntoAFreshModel) {
  Net a, b;
  b->load_state_dict(a->state_dict());
  const Tensor x = randn({2, 8});
  EXPECT_TRUE(equal(a->forward(x), b->forward(x)));
  EXPECT_EQ(a->state_dict().size(), 6u);  // five parameters and one buffer
}

TEST(Module, StrictLoadListsMissingUnexpectedAndMismatchedKeys) {
  Net net;
  nn::StateDict state = net->state_dict();
  state.erase("head.bias");
  state["extra.weight"] = zeros({1});
  EXPECT_TRUE(throws_with<Error>([&] { net->load_state_dict(state); }, "Missing keys: head.bias"));
  EXPECT_TRUE(throws_with<Error>([&] { net->load_state_dict(state); }, "Unexpected keys: extra.weight"));
  const auto keys = net->load_state_dict(state, /*strict=*/false);
  EXPECT_EQ(keys.missing_keys, std::vector<std::string>{"head.bias"});
  EXPECT_EQ(keys.unexpected_keys, std::vector<std::string>{"extra.weight"});
  EXPECT_TRUE(net->load_state_dict(net->state_dict()).missing_keys.empty());
  state["head.weight"] = zeros({9, 9});
  EXPECT_TRUE(throws_with<Error>([&] { net->load_state_dict(state, false); }, "head.weight: checkpoint [9, 9]"));
}

// PyTorch's register_buffer(..., persistent=False): the buffer moves with the module and is
// listed by named_buffers(), but state_dict() leaves it out, a strict load does not miss it, and
// a checkpoint that holds it has an unexpected key.
TEST(Module, ANonPersistentBufferMovesButIsNotSaved) {
  struct CachedImpl : nn::Module {
    CachedImpl() {
      scale = register_parameter("scale", randn({3}));
      mask = register_buffer("mask", randn({3}), /*persistent=*/false);
      count = register_buffer("count", zeros({}, {.dtype = kInt64}));
    }
    Tensor scale, mask, count;
  };
  auto model = std::make_shared<CachedImpl>();
  EXPECT_EQ(names_of(model->named_buffers()), (std::vector<std::string>{"mask", "count"}));
  nn::StateDict state = model->state_dict();
  EXPECT_EQ(state.size(), 2u);
  EXPECT_EQ(state.count("mask"), 0u);

  auto other = std::make_shared<CachedImpl>();
  const Tensor other_mask = other->mask.clone();
  other->load_state_dict(state);  // strict: "mask" is not missing
  EXPECT_TRUE(equal(other->scale, model->scale));
  EXPECT_TRUE(equal(other->mask, other_mask));

  state["mask"] = model->mask;
  EXPECT_TRUE(throws_with<Error>([&] { other->load_state_dict(state); }, "Unexpected keys: mask"));
  model->to(kFloat64);
  EXPECT_EQ(model->mask.dtype(), kFloat64);
}

// An undefined tensor in the checkpoint is named in the error, and nothing is loaded.
TEST(Module, LoadNamesAnUndefinedCheckpointTensor) {
  Net net;
  nn::StateDict state = Net()->state_dict();
  state["head.weight"] = Tensor();
  const Tensor before = net->encoder->fc1->weight.clone();
  EXPECT_TRUE(throws_with<Error>([&] { net->load_state_dict(state); }, "head.weight: checkpoint undefined"));
  EXPECT_TRUE(equal(net->encoder->fc1->weight, before));
}

TEST(Module, PrintsTheTree) {
  auto model = nn::Sequential(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
  EXPECT_EQ(model->str(),
            "Sequential(\n"
            "  (0): Linear(in_features=784, out_features=128, bias=true)\n"
            "  (1): ReLU()\n"
            "  (2): Linear(in_features=128, out_features=10, bias=true)\n"
            ")");
  std::ostringstream s;
  s << *Net().get();
  EXPECT_NE(s.str().find("(encoder): Encoder(\n    (fc1): Linear"), std::string::npos) << s.str();
}

TEST(Module, RegistrationErrors) {
  struct Bad : nn::Module {
    void twice() {
      register_parameter("w", zeros({1}));
      register_parameter("w", zeros({1}));
    }
    void dotted() { register_buffer("a.b", zeros({1})); }
  };
  Bad bad;
  EXPECT_TRUE(throws_with<Error>([&] { bad.twice(); }, "already registered"));
  EXPECT_TRUE(throws_with<Error>([&] { bad.dotted(); }, "no '.'"));
  nn::Linear empty(nullptr);
  EXPECT_TRUE(throws_with<Error>([&] { empty->forward(zeros({1})); }, "empty"));
}

// A tensor registered twice (tied weights) is listed once by named_parameters() and
// named_buffers(), under its first name, as PyTorch's (remove_duplicate=True): what walks them
// (DistributedDataParallel's buckets, an optimiser built from them) must not see it twice. The
// state dict keeps both names, as PyTorch's.
TEST(Module, TiedTensorsAreListedOnceButSavedUnderEveryName) {
  struct TiedImpl : nn::Module {
    TiedImpl() {
      embed = register_module("embed", nn::Embedding(5, 3));
      register_parameter("out_weight", embed->weight);
      const Tensor count = register_buffer("count", zeros({1}));
      register_buffer("count_again", count);
    }
    nn::Embedding embed{nullptr};
  };
  TiedImpl tied;
  EXPECT_EQ(names_of(tied.named_parameters()), std::vector<std::string>{"out_weight"});
  EXPECT_EQ(tied.parameters().size(), 1u);
  EXPECT_EQ(names_of(tied.named_buffers()), std::vector<std::string>{"count"});
  EXPECT_EQ(tied.buffers().size(), 1u);
  const nn::StateDict state = tied.state_dict();
  EXPECT_EQ(state.size(), 4u);
  EXPECT_EQ(state.count("embed.weight"), 1u);
  EXPECT_EQ(state.count("count_again"), 1u);
  tied.load_state_dict(state);  // strict: both names are expected
}

// modules() of a module that no shared_ptr holds (one on the stack) is a clear hw::Error, not
// std::bad_weak_ptr.
TEST(Module, ModulesOfAModuleOutsideASharedPtrIsAClearError) {
  struct Plain : nn::Module {
    Plain() { register_module("fc", nn::Linear(2, 2)); }
  };
  Plain plain;
  EXPECT_TRUE(throws_with<Error>([&] { plain.modules(); }, "std::make_shared"));
  EXPECT_EQ(std::make_shared<Plain>()->modules().size(), 2u);
}

// register_parameter's requires_grad is what the parameter ends with, as LibTorch's: false turns
// off a tensor that required gradients (a frozen parameter), and an optimiser then skips it.
TEST(Module, RegisterParameterWithoutGradFreezesIt) {
  struct Frozen : nn::Module {
    Frozen() { w = register_parameter("w", ones({2}).set_requires_grad(true), /*requires_grad=*/false); }
    Tensor w;
  };
  Frozen frozen;
  EXPECT_FALSE(frozen.w.requires_grad());
  EXPECT_FALSE(frozen.named_parameters()[0].second.requires_grad());
}

// requires_grad_(false) on a part of a model freezes it: backward leaves its parameters without a
// gradient while the rest get one, and requires_grad_() thaws it again, on the same tensors.
TEST(Module, RequiresGradFalseFreezesASubtree) {
  Net net;
  const Tensor fc1_weight = net->encoder->fc1->weight;
  net->encoder->requires_grad_(false);
  for (const auto& [name, p] : net->named_parameters()) {
    EXPECT_EQ(p.requires_grad(), name.rfind("head.", 0) == 0) << name;
  }
  net->forward(randn({2, 8})).sum().backward();
  EXPECT_FALSE(net->encoder->fc1->weight.grad().defined());
  EXPECT_TRUE(net->head->weight.grad().defined());
  net->requires_grad_();
  EXPECT_TRUE(net->encoder->fc1->weight.requires_grad());
  EXPECT_TRUE(net->encoder->fc1->weight.is_same(fc1_weight));

  // An integer parameter is left as it is, as register_parameter leaves it, not an error half-way.
  struct Counted : nn::Module {
    Counted() {
      steps = register_parameter("steps", zeros({1}, {.dtype = kInt64}));
      w = register_parameter("w", ones({2}));
    }
    Tensor steps, w;
  };
  Counted counted;
  counted.requires_grad_(false);
  EXPECT_FALSE(counted.w.requires_grad());
  counted.requires_grad_(true);
  EXPECT_TRUE(counted.w.requires_grad());
  EXPECT_FALSE(counted.steps.requires_grad());
}

TEST(Module, DropoutScalesWhileTrainingAndIsIdentityInEval) {
  nn::Dropout drop(0.25);
  const Tensor x = ones({100000});
  const std::vector<double> y = values_of(drop->forward(x));
  std::size_t kept = 0;
  for (double v : y) {
    ASSERT_TRUE(v == 0.0 || std::abs(v - 1.0 / 0.75) < 1e-6);
    kept += v != 0.0;
  }
  EXPECT_NEAR(static_cast<double>(kept) / 100000.0, 0.75, 0.01);
  drop->eval();
  EXPECT_TRUE(equal(drop->forward(x), x));
  // An integer input is named as such by dropout itself (the error came from rand).
  drop->train();
  EXPECT_TRUE(throws_with<Error>([&] { drop->forward(ones({4}, {.dtype = kInt64})); },
                                 "dropout: expected a floating point input, got int64"));
}

// The keep probability is 1 - p in the reduced-precision dtypes too, also for p near 1, where a
// draw on bfloat16's or half's coarse grid of [0, 1) would keep too few elements (or none).
TEST(Module, DropoutKeepsOneMinusPInReducedPrecision) {
  const std::int64_t n = std::int64_t{1} << 21;
  for (const auto& [dtype, p] : {std::pair{kBFloat16, 0.99}, std::pair{kFloat16, 0.9999}}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::vector<double> y = values_of(nn::functional::dropout(ones({n}, {.dtype = dtype}), p, true));
    double kept = 0;
    for (double v : y) kept += v != 0.0;
    const double expected = (1.0 - p) * static_cast<double>(n);
    EXPECT_NEAR(kept, expected, 6 * std::sqrt(expected));
  }
}

TEST(Module, SequentialAppliesInOrderAndBackpropagates) {
  auto model = nn::Sequential(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 2), nn::Sigmoid());
  const Tensor x = randn({5, 3});
  Tensor manual = x;
  for (std::size_t i = 0; i < model->size(); ++i) manual = (*model)[i]->forward(manual);
  EXPECT_TRUE(equal(model->forward(x), manual));
  model->forward(x).sum().backward();
  for (const Tensor& p : model->parameters()) EXPECT_TRUE(p.grad().defined());
}

// A module whose constructor keeps a tensor it never registers: to() cannot move it, and says so.
struct ForgetfulImpl : nn::Module {
  ForgetfulImpl() {
    fc = register_module("fc", nn::Linear(3, 2));
    scale = ones({2}) * 2.0;   // the bug: a member tensor, never registered
    const Tensor scratch = zeros({5});  // a temporary: gone when the constructor ends
    register_buffer("offset", zeros({2}) + scratch.sum());
  }
  Tensor forward(const Tensor& x) override { return fc->forward(x) * scale; }
  nn::Linear fc{nullptr};
  Tensor scale;
};
HWARO_MODULE(Forgetful);

struct HoldsForgetfulImpl : nn::Module {
  HoldsForgetfulImpl() { inner = register_module("inner", Forgetful()); }
  Tensor forward(const Tensor& x) override { return inner->forward(x); }
  Forgetful inner{nullptr};
};
HWARO_MODULE(HoldsForgetful);

std::string stderr_of(const std::function<void()>& fn) {
  ::testing::internal::CaptureStderr();
  fn();
  return ::testing::internal::GetCapturedStderr();
}

TEST(Module, ToWarnsOnceAboutATensorTheConstructorNeverRegistered) {
  Forgetful model;
  const std::string warning = stderr_of([&] { model->to(other_device()); });
  EXPECT_NE(warning.find("hwaro: warning: "), std::string::npos) << warning;
  EXPECT_NE(warning.find("holds a tensor of shape [2] that its constructor created but never registered: it stays "
                         "on cpu while the module moves to " + other_device().str()),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("register_buffer()"), std::string::npos) << warning;
  EXPECT_EQ(warning.find("[5]"), std::string::npos) << "the temporary is not reported: " << warning;
  EXPECT_EQ(warning.find("[2, 3]"), std::string::npos) << "registered tensors are not reported: " << warning;
  EXPECT_EQ(model->scale.device(), Device("cpu"));  // what the warning is about
  EXPECT_EQ(stderr_of([&] { model->to(Device("cpu")); }), "") << "once per module";
}

TEST(Module, TheWarningNamesTheChildsPathAndStaysQuietWhenNothingIsLeftBehind) {
  HoldsForgetful outer;
  const std::string warning = stderr_of([&] { outer->to(other_device()); });
  EXPECT_NE(warning.find(" at inner holds a tensor of shape [2]"), std::string::npos) << warning;
  EXPECT_EQ(stderr_of([&] { Net()->to(other_device()); }), "") << "every tensor of Net is registered";
  Forgetful stays;
  EXPECT_EQ(stderr_of([&] { stays->to(Device("cpu")); }), "") << "nothing moved, so nothing stayed behind";
}

TEST(Module, ToDtypeWarnsAboutTheFloatingTensorThatKeepsItsDtype) {
  Forgetful model;
  const std::string warning = stderr_of([&] { model->to(kFloat64); });
  EXPECT_NE(warning.find("holds a tensor of shape [2] that its constructor created but never registered: it stays "
                         "float32 while the module moves to float64"),
            std::string::npos)
      << warning;
  EXPECT_EQ(model->scale.dtype(), kFloat32);  // what the warning is about
  EXPECT_EQ(model->fc->weight.dtype(), kFloat64);

  Forgetful both;
  const std::string both_warning = stderr_of([&] { both->to(other_device(), kFloat64); });
  EXPECT_NE(both_warning.find("it stays float32 on cpu while the module moves to float64 on " + other_device().str()),
            std::string::npos)
      << both_warning;
  Forgetful same;
  EXPECT_EQ(stderr_of([&] { same->to(kFloat32); }), "") << "a float32 tensor lost nothing by to(float32)";
}

struct KeepsIndicesImpl : nn::Module {
  KeepsIndicesImpl() { indices = arange(4); }  // an integer tensor, unregistered
  Tensor forward(const Tensor& x) override { return x; }
  Tensor indices;
};
HWARO_MODULE(KeepsIndices);

TEST(Module, ToDtypeDoesNotWarnAboutAnIntegerTensorWhichItWouldNotHaveConverted) {
  KeepsIndices model;
  ASSERT_FALSE(model->indices.is_floating_point());
  EXPECT_EQ(stderr_of([&] { model->to(kFloat64); }), "");
  EXPECT_NE(stderr_of([&] { model->to(other_device()); }).find("shape [4]"), std::string::npos)
      << "to(device) would have moved it";
}

}  // namespace
}  // namespace hwaro::test
