// Module features test_nn_module leaves out: apply, ModuleList, the activation/Flatten/Softmax
// modules (values and printout), hw::nn::init's statistics and gains, Linear's bias bound.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "support/module_fixtures.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace nn = hwaro::nn;
namespace F = hwaro::nn::functional;

struct NetImpl : nn::Module {
  NetImpl() {
    encoder = register_module("encoder", Encoder());
    act = register_module("act", nn::Tanh());
    head = register_module("head", nn::Linear(4, 3));
  }
  Tensor forward(const Tensor& x) override { return head->forward(act->forward(encoder->forward(x))); }
  Encoder encoder{nullptr};
  nn::Tanh act{nullptr};
  nn::Linear head{nullptr};
};
HWARO_MODULE(Net);

// A stack of layers in a ModuleList, one of them appended after registration, plus an own parameter.
struct StackImpl : nn::Module {
  StackImpl() {
    layers = register_module("layers", nn::ModuleList(nn::Linear(3, 4), nn::Linear(4, 4)));
    layers->push_back(nn::Linear(4, 2, nn::LinearOptions{.bias = false}));
    scale = register_parameter("scale", ones({2}));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = x;
    for (const auto& layer : *layers) h = layer->forward(h).tanh();
    return h * scale;
  }
  nn::ModuleList layers{nullptr};
  Tensor scale;
};
HWARO_MODULE(Stack);

// ---------------------------------------------------------------- apply

TEST(ModuleApply, VisitsEveryModuleOnceDepthFirstSelfBeforeChildren) {
  Net net;
  std::vector<std::string> visited;
  std::vector<const nn::Module*> visited_ptrs;
  net->apply([&](nn::Module& m) {
    visited.push_back(m.path());
    visited_ptrs.push_back(&m);
  });
  // LibTorch's order: the module itself, then each child's subtree in registration order.
  EXPECT_EQ(visited, (std::vector<std::string>{"", "encoder", "encoder.fc1", "encoder.fc2", "act", "head"}));
  const auto all = net->modules();
  ASSERT_EQ(visited_ptrs.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(visited_ptrs[i], all[i].get()) << "module " << i;
}

// named_modules(): the same walk with dotted paths; a module registered twice (a shared layer)
// is listed once, at its first place, as PyTorch's remove_duplicate=True, and apply() visits it once.
TEST(ModuleApply, NamedModulesGivesPathsAndListsASharedModuleOnce) {
  Net net;
  std::vector<std::string> names;
  std::vector<const nn::Module*> ptrs;
  for (const auto& [path, m] : net->named_modules()) {
    names.push_back(path);
    ptrs.push_back(m.get());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"", "encoder", "encoder.fc1", "encoder.fc2", "act", "head"}));
  EXPECT_EQ(ptrs.front(), net.ptr().get());
  EXPECT_EQ(ptrs[2], net->encoder->fc1.ptr().get());

  struct SharedImpl : nn::Module {
    SharedImpl() {
      layer = register_module("first", nn::Linear(2, 2));
      register_module("again", layer);
      tail = register_module("tail", nn::Linear(2, 2));
    }
    nn::Linear layer{nullptr}, tail{nullptr};
  };
  const auto shared = std::make_shared<SharedImpl>();
  const auto named = shared->named_modules();
  ASSERT_EQ(named.size(), 3u);
  EXPECT_EQ(named[1].first, "first");
  EXPECT_EQ(named[2].first, "tail");
  EXPECT_EQ(shared->modules().size(), 3u);
  int applied = 0;
  shared->apply([&](nn::Module&) { ++applied; });
  EXPECT_EQ(applied, 3) << "apply() visits the shared layer once";
}

TEST(ModuleApply, ReinitialisesEveryLinearInPlace) {
  Net net;
  const std::vector<Tensor> held = net->parameters();  // as an optimiser holds them
  int linears = 0;
  net->apply([&](nn::Module& m) {
    if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m)) {
      ++linears;
      nn::init::constant_(linear->weight, 0.25);
      if (linear->bias.defined()) nn::init::constant_(linear->bias, -1.5);
    }
  });
  EXPECT_EQ(linears, 3);
  const auto named = net->named_parameters();
  ASSERT_EQ(named.size(), held.size());
  for (std::size_t i = 0; i < named.size(); ++i) {
    SCOPED_TRACE(named[i].first);
    EXPECT_TRUE(named[i].second.is_same(held[i]));
    EXPECT_TRUE(named[i].second.requires_grad());
    const bool is_bias = named[i].first.ends_with("bias");
    const std::vector<double> v = values_of(held[i]);
    EXPECT_EQ(v, std::vector<double>(v.size(), is_bias ? -1.5 : 0.25));
  }
  EXPECT_EQ(values_of(net->named_buffers()[0].second), std::vector<double>(4, 0.0)) << "buffers untouched";
  // On ones: fc1 gives 0.25 * 8 - 1.5 = 0.5 (relu keeps it), fc2 0.25 * 6 * 0.5 = 0.75, tanh, then
  // head 0.25 * 4 * tanh(0.75) - 1.5.
  const double expected = std::tanh(0.75) - 1.5;
  EXPECT_TRUE(all_close(values_of(net->forward(ones({2, 8}))), std::vector<double>(6, expected), 1e-6, 1e-6));
}

// ---------------------------------------------------------------- ModuleList

TEST(ModuleList, PushBackSizeIndexingAndIteration) {
  nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
  EXPECT_EQ(list->size(), 2u);
  list->push_back(nn::Linear(3, 5));
  ASSERT_EQ(list->size(), 3u);
  const auto last = std::dynamic_pointer_cast<nn::LinearImpl>((*list)[2]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->in_features, 3);
  EXPECT_EQ(last->out_features, 5);
  EXPECT_NE(std::dynamic_pointer_cast<nn::ReLUImpl>((*list)[1]), nullptr);
  std::vector<std::string> names;
  for (const auto& m : *list) names.push_back(m->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Linear", "ReLU", "Linear"}));
  std::size_t i = 0;
  for (const auto& m : *list) EXPECT_EQ(m.get(), (*list)[i++].get());
  EXPECT_TRUE(throws_with<IndexError>([&] { (void)(*list)[3]; }, "ModuleList: index 3 is out of range for 3"));
  // As PyTorch's, a negative index counts from the end.
  EXPECT_EQ((*list)[-1], last);
  EXPECT_EQ((*list)[-3], (*list)[0]);
  EXPECT_TRUE(throws_with<IndexError>([&] { (void)(*list)[-4]; }, "ModuleList: index -4 is out of range for 3"));
  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU());
  EXPECT_EQ((*seq)[-1], (*seq)[1]);
  EXPECT_TRUE(throws_with<IndexError>([&] { (void)(*seq)[2]; }, "Sequential: index 2 is out of range for 2"));
  // Children are named "0", "1", "2" as in PyTorch.
  std::vector<std::string> child_names;
  for (const auto& [n, _] : list->named_children()) child_names.push_back(n);
  EXPECT_EQ(child_names, (std::vector<std::string>{"0", "1", "2"}));
}

TEST(ModuleList, ItsParametersHaveDottedIndicesInTheParent) {
  Stack stack;
  EXPECT_EQ(names_of(stack->named_parameters()),
            (std::vector<std::string>{"scale", "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                                      "layers.2.weight"}));
  EXPECT_EQ((*stack->layers)[2]->path(), "layers.2");
  const nn::StateDict state = stack->state_dict();
  EXPECT_EQ(state.count("layers.1.bias"), 1u);
  // Gradients reach every item through the parent's forward.
  stack->forward(randn({5, 3})).sum().backward();
  for (const auto& [n, p] : stack->named_parameters()) EXPECT_TRUE(p.grad().defined()) << n;
}

TEST(ModuleList, ToDeviceMovesEveryItemsParametersInPlace) {
  Stack stack;
  const std::vector<Tensor> held = stack->parameters();
  ASSERT_EQ(held.size(), 6u);
  stack->to(other_device());
  const auto moved = stack->parameters();
  for (std::size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(held[i].device(), other_device()) << "parameter " << i;
    EXPECT_TRUE(held[i].is_same(moved[i])) << "parameter " << i;
  }
  for (const auto& layer : *stack->layers) EXPECT_EQ(layer->device(), other_device());
  EXPECT_EQ(stack->device(), other_device());
}

// ---------------------------------------------------------------- activation modules

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// As PyTorch's model[0] = nn.Linear(...): a child a container replaces is the one its forward()
// and its indexing use, not only the one parameters() lists.
TEST(Containers, ReplacingAChildChangesWhatTheContainerRuns) {
  nn::Sequential seq(nn::Linear(3, 4), nn::ReLU());
  const nn::Linear wider(3, 5);
  seq->replace_module("0", wider);
  EXPECT_EQ(seq->forward(ones({2, 3})).size(1), 5);
  EXPECT_EQ((*seq)[0], wider.ptr());
  EXPECT_TRUE(equal(seq->parameters()[0], wider->weight));

  nn::ModuleList list(nn::Linear(2, 2), nn::Linear(2, 2));
  const nn::Tanh tanh;
  list->replace_module("1", tanh);
  EXPECT_EQ((*list)[1], tanh.ptr());
  EXPECT_EQ(*std::next(list->begin()), tanh.ptr());
  EXPECT_EQ(list->parameters().size(), 2u) << "the replaced Linear's parameters are gone";

  nn::ModuleDict heads(
      std::vector<nn::ModuleDictImpl::Item>{{"digits", nn::Linear(4, 10).ptr()}, {"letters", nn::Linear(4, 26).ptr()}});
  const nn::Linear fewer(4, 2);
  heads->replace_module("digits", fewer);
  EXPECT_EQ((*heads)["digits"], fewer.ptr());
  EXPECT_EQ(heads->values()[0], fewer.ptr());
}

// As PyTorch's Module.to: an integer dtype is refused with or without a device, before anything
// moves (a frozen model, whose tensors set_data would not guard, was converted to integers).
TEST(ModuleTo, AnIntegerDTypeIsRefusedWithADeviceToo) {
  nn::Linear frozen(2, 2);
  frozen->requires_grad_(false);
  EXPECT_TRUE(throws_with<Error>([&] { frozen->to(Device("cpu"), kInt64); }, "only accepts floating point dtypes"));
  EXPECT_EQ(frozen->weight.dtype(), kFloat32);
}

// An undefined buffer (PyTorch's None) is not listed, as PyTorch's buffers() skips None, so a
// module whose first buffer is undefined still has a device.
struct OptionalScaleImpl : nn::Module {
  OptionalScaleImpl() {
    register_buffer("shift", Tensor());
    register_buffer("scale", ones({1}).to(other_device()));
  }
};
HWARO_MODULE(OptionalScale);

TEST(ModuleBuffers, AnUndefinedBufferIsNotListed) {
  OptionalScale m;
  ASSERT_EQ(m->named_buffers().size(), 1u);
  EXPECT_EQ(m->named_buffers()[0].first, "scale");
  EXPECT_EQ(m->buffers().size(), 1u);
  EXPECT_EQ(m->device(), other_device());
}

TEST(ActivationModules, ForwardMatchesTheOpsAndFloat64References) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor x = random_tensor({4, 6}, kFloat32, rng, -4, 4);
  const std::vector<double> xs = values_of(x);
  const auto ref = [&](double (*f)(double)) {
    std::vector<double> out;
    for (double v : xs) out.push_back(f(v));
    return out;
  };
  const double rtol = rtol_for(kFloat32), atol = atol_for(kFloat32);

  nn::ReLU relu;
  EXPECT_TRUE(equal(relu(x), F::relu(x)));
  EXPECT_TRUE(all_close(values_of(relu(x)), ref([](double v) { return std::max(v, 0.0); }), 0, 0));
  nn::Tanh tanh_module;
  EXPECT_TRUE(equal(tanh_module(x), x.tanh()));
  EXPECT_TRUE(all_close(values_of(tanh_module(x)), ref([](double v) { return std::tanh(v); }), rtol, atol));
  nn::Sigmoid sigmoid_module;
  EXPECT_TRUE(equal(sigmoid_module(x), x.sigmoid()));
  EXPECT_TRUE(all_close(values_of(sigmoid_module(x)), ref(sigmoid_ref), rtol, atol));
  nn::SiLU silu;
  EXPECT_TRUE(equal(silu(x), F::silu(x)));
  EXPECT_TRUE(all_close(values_of(silu(x)), ref([](double v) { return v * sigmoid_ref(v); }), rtol, atol));
  nn::GELU gelu;
  EXPECT_TRUE(equal(gelu(x), F::gelu(x)));
  EXPECT_TRUE(all_close(values_of(gelu(x)), ref([](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }),
                        rtol, atol));
  nn::GELU gelu_tanh(true);
  EXPECT_TRUE(equal(gelu_tanh(x), F::gelu(x, true)));
  EXPECT_TRUE(all_close(values_of(gelu_tanh(x)), ref([](double v) {
                          const double k = std::sqrt(2.0 / std::numbers::pi);
                          return 0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v)));
                        }),
                        rtol, atol));

  nn::Softmax softmax(1);
  EXPECT_TRUE(equal(softmax(x), F::softmax(x, 1)));
  std::vector<double> want;
  for (int r = 0; r < 4; ++r) {
    double z = 0;
    for (int c = 0; c < 6; ++c) z += std::exp(xs[r * 6 + c]);
    for (int c = 0; c < 6; ++c) want.push_back(std::exp(xs[r * 6 + c]) / z);
  }
  EXPECT_TRUE(all_close(values_of(softmax(x)), want, rtol, atol));
  nn::Softmax softmax0(0);
  EXPECT_TRUE(equal(softmax0(x), F::softmax(x, 0)));
  EXPECT_FALSE(equal(softmax0(x), softmax(x)));

  const Tensor image = random_tensor({2, 3, 4, 5}, kFloat32, rng);
  nn::Flatten flatten;
  const Tensor flat = flatten(image);
  EXPECT_EQ(flat.sizes(), IntArrayRef({2, 60}));
  EXPECT_TRUE(equal(flat, image.flatten(1)));
  EXPECT_EQ(values_of(flat), values_of(image));
  nn::Flatten middle(1, 2);
  EXPECT_EQ(middle(image).sizes(), IntArrayRef({2, 12, 5}));
}

TEST(ActivationModules, PrintoutNamesThem) {
  EXPECT_EQ(nn::ReLU()->str(), "ReLU()");
  EXPECT_EQ(nn::SiLU()->str(), "SiLU()");
  EXPECT_EQ(nn::GELU()->str(), "GELU()");
  EXPECT_EQ(nn::GELU(true)->str(), "GELU(approximate='tanh')");
  EXPECT_EQ(nn::Tanh()->str(), "Tanh()");
  EXPECT_EQ(nn::Sigmoid()->str(), "Sigmoid()");
  EXPECT_EQ(nn::Softmax(1)->str(), "Softmax(dim=1)");
  EXPECT_EQ(nn::Flatten()->str(), "Flatten(start_dim=1, end_dim=-1)");
  auto model = nn::Sequential(nn::Flatten(), nn::Linear(4, 3), nn::SiLU(), nn::Softmax(-1));
  EXPECT_EQ(model->str(),
            "Sequential(\n"
            "  (0): Flatten(start_dim=1, end_dim=-1)\n"
            "  (1): Linear(in_features=4, out_features=3, bias=true)\n"
            "  (2): SiLU()\n"
            "  (3): Softmax(dim=-1)\n"
            ")");
}

// ---------------------------------------------------------------- nn::init

struct Stats {
  double min, max, mean, std;
};

Stats stats_of(const Tensor& t) {
  const std::vector<double> v = values_of(t);
  Stats s{v[0], v[0], 0, 0};
  for (double x : v) {
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    s.mean += x;
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(v.size() - 1));
  return s;
}

// 120000 samples: the sample mean is within 5 standard errors (std / 346) of the true mean, and
// the sample std within 3% of the true std (its relative standard error is about 0.3%).
void expect_distribution(const Tensor& t, double mean, double std, const std::string& what) {
  const Stats s = stats_of(t);
  EXPECT_NEAR(s.mean, mean, 5 * std / std::sqrt(static_cast<double>(t.numel()))) << what << " mean";
  EXPECT_NEAR(s.std, std, 0.03 * std) << what << " std";
}

// Uniform on [low, high]: inside it (up to the float32 rounding of the ends), reaching close to
// both ends, with std (high - low) / sqrt(12).
void expect_uniform(const Tensor& t, double low, double high, const std::string& what) {
  const Stats s = stats_of(t);
  const double rounding = 1e-6 * std::max(std::abs(low), std::abs(high));
  EXPECT_GE(s.min, low - rounding) << what;
  EXPECT_LE(s.max, high + rounding) << what;
  EXPECT_LT(s.min, low + 0.01 * (high - low)) << what << " does not reach its lower bound";
  EXPECT_GT(s.max, high - 0.01 * (high - low)) << what << " does not reach its upper bound";
  expect_distribution(t, (low + high) / 2, (high - low) / std::sqrt(12.0), what);
}

class Init : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = fresh_seed();
    generator_.manual_seed(seed_);
  }
  // A [400, 300] weight: fan_in 300, fan_out 400.
  Tensor weight() const { return empty({400, 300}); }
  std::uint64_t seed_ = 0;
  Generator generator_;
  static constexpr double kFanIn = 300, kFanOut = 400;
};

TEST_F(Init, FanInAndFanOut) {
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(empty({400, 300})), (std::pair<std::int64_t, std::int64_t>{300, 400}));
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(empty({8, 4, 3, 2})), (std::pair<std::int64_t, std::int64_t>{24, 48}));
}

TEST_F(Init, CalculateGainExactValues) {
  EXPECT_EQ(nn::init::calculate_gain("linear"), 1.0);
  EXPECT_EQ(nn::init::calculate_gain("conv2d"), 1.0);
  EXPECT_EQ(nn::init::calculate_gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("leaky_relu"), std::sqrt(2.0 / (1.0 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("selu"), 0.75);
  EXPECT_TRUE(throws_with<Error>([] { nn::init::calculate_gain("softplus"); }, "softplus"));
}

TEST_F(Init, UniformAndNormal) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  Tensor u = weight();
  nn::init::uniform_(u, -0.5, 2.0, &generator_);
  expect_uniform(u, -0.5, 2.0, "uniform_(-0.5, 2)");
  Tensor n = weight();
  nn::init::normal_(n, 1.5, 0.3, &generator_);
  expect_distribution(n, 1.5, 0.3, "normal_(1.5, 0.3)");
}

TEST_F(Init, XavierUniformAndNormal) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  for (double gain : {1.0, nn::init::calculate_gain("tanh")}) {
    SCOPED_TRACE("gain " + std::to_string(gain));
    const double std = gain * std::sqrt(2.0 / (kFanIn + kFanOut));
    Tensor u = weight();
    nn::init::xavier_uniform_(u, gain, &generator_);
    const double bound = std * std::sqrt(3.0);  // gain * sqrt(6 / (fan_in + fan_out))
    expect_uniform(u, -bound, bound, "xavier_uniform_");
    Tensor n = weight();
    nn::init::xavier_normal_(n, gain, &generator_);
    expect_distribution(n, 0.0, std, "xavier_normal_");
  }
}

TEST_F(Init, KaimingNormalAndUniform) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  // Defaults: a = 0, fan_in, leaky_relu -> gain sqrt(2), std sqrt(2 / fan_in).
  Tensor n = weight();
  nn::init::kaiming_normal_(n, 0.0, nn::init::FanMode::FanIn, "leaky_relu", &generator_);
  expect_distribution(n, 0.0, std::sqrt(2.0 / kFanIn), "kaiming_normal_ defaults");
  Tensor out = weight();
  nn::init::kaiming_normal_(out, 0.0, nn::init::FanMode::FanOut, "relu", &generator_);
  expect_distribution(out, 0.0, std::sqrt(2.0 / kFanOut), "kaiming_normal_ fan_out relu");
  Tensor slope = weight();
  nn::init::kaiming_normal_(slope, 0.2, nn::init::FanMode::FanIn, "leaky_relu", &generator_);
  expect_distribution(slope, 0.0, std::sqrt(2.0 / 1.04) / std::sqrt(kFanIn), "kaiming_normal_ a=0.2");
  // Linear's choice: a = sqrt(5) -> gain sqrt(1/3), bound gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in).
  Tensor u = weight();
  nn::init::kaiming_uniform_(u, std::sqrt(5.0), nn::init::FanMode::FanIn, "leaky_relu", &generator_);
  const double bound = 1.0 / std::sqrt(kFanIn);
  expect_uniform(u, -bound, bound, "kaiming_uniform_ a=sqrt(5)");
}

TEST_F(Init, TheSameGeneratorSeedGivesTheSameValues) {
  Tensor a = weight(), b = weight();
  Generator g1(seed_), g2(seed_);
  nn::init::xavier_normal_(a, 1.0, &g1);
  nn::init::xavier_normal_(b, 1.0, &g2);
  EXPECT_TRUE(equal(a, b));
  nn::init::xavier_normal_(b, 1.0, &g2);
  EXPECT_FALSE(equal(a, b));
}

TEST(LinearInit, BiasLiesWithinOneOverSqrtFanInAndIsSpread) {
  for (std::int64_t in : {7, 64}) {
    SCOPED_TRACE("in_features " + std::to_string(in));
    nn::Linear fc(in, 2000);
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    const std::vector<double> b = values_of(fc->bias);
    ASSERT_EQ(b.size(), 2000u);
    const auto [lo, hi] = std::minmax_element(b.begin(), b.end());
    EXPECT_GE(*lo, -bound * (1 + 1e-6));  // float32 may round a draw at the edge onto the bound's far side
    EXPECT_LE(*hi, bound * (1 + 1e-6));
    EXPECT_GT(*hi - *lo, bound) << "2000 uniform draws over [-b, b] span almost 2b";
  }
}

}  // namespace
}  // namespace hwaro::test
