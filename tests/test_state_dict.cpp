// hw::nn::StateDict: insertion order (PyTorch's OrderedDict), lookups, erase, and the state_dict()
// order of a module tree: each module's parameters, then its buffers, then its children's.
#include <map>
#include <string>
#include <vector>

#include "serialize_test_files.h"
#include "support/module_fixtures.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace nn = hwaro::nn;

std::vector<std::string> keys_of(const nn::StateDict& state) {
  std::vector<std::string> out;
  for (const auto& [name, _] : state) out.push_back(name);
  return out;
}

TEST(StateDict, KeepsInsertionOrderAndARepeatedNameKeepsItsFirstPlace) {
  const Tensor a = full({1}, 1.0), b = full({1}, 2.0), c = full({1}, 3.0);
  const nn::StateDict state{{"z", a}, {"a", b}, {"z", c}};
  EXPECT_EQ(keys_of(state), (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(state.size(), 2u);
  EXPECT_EQ(state.at("z").item<double>(), 3.0) << "the last value, as a Python dict literal";
  EXPECT_EQ(state.count("a"), 1u);
  EXPECT_EQ(state.count("b"), 0u);
  EXPECT_TRUE(state.contains("z"));
  EXPECT_FALSE(state.contains("b"));
  EXPECT_TRUE(state.find("b") == state.end());
}

TEST(StateDict, EraseKeepsTheOthersOrderAndTheirLookups) {
  nn::StateDict state;
  for (int i = 0; i < 6; ++i) state[std::to_string(i)] = full({1}, static_cast<double>(i));
  EXPECT_EQ(state.erase("2"), 1u);
  EXPECT_EQ(state.erase("2"), 0u);
  EXPECT_EQ(keys_of(state), (std::vector<std::string>{"0", "1", "3", "4", "5"}));
  for (const char* name : {"0", "1", "3", "4", "5"}) {
    EXPECT_EQ(state.at(name).item<double>(), std::stod(name)) << name << " found at its new place";
  }
  const auto [where, added] = state.emplace("2", full({1}, 7.0));
  EXPECT_TRUE(added);
  EXPECT_EQ(where->first, "2");
  EXPECT_EQ(keys_of(state).back(), "2") << "added back at the end";
  EXPECT_FALSE(state.emplace("0", full({1}, 9.0)).second);
  EXPECT_EQ(state.at("0").item<double>(), 0.0) << "emplace leaves an existing name alone";
  state.clear();
  EXPECT_TRUE(state.empty());
  EXPECT_FALSE(state.contains("0"));
  state["0"] = full({1}, 4.0);
  EXPECT_EQ(keys_of(state), std::vector<std::string>{"0"}) << "usable again after clear()";
}

TEST(StateDict, AMissingNameIsAnIndexErrorNamingIt) {
  const nn::StateDict state{{"weight", zeros({2})}};
  EXPECT_TRUE(throws_with<IndexError>([&] { (void)state.at("bias"); }, "no tensor named 'bias'"));
}

TEST(StateDict, ANameOrderedMapConvertsInNameOrder) {
  const std::map<std::string, Tensor> by_name{{"b", zeros({1})}, {"a", zeros({2})}};
  const nn::StateDict state = by_name;
  EXPECT_EQ(keys_of(state), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(state.at("a").numel(), 2);
}

// A copy is a dict of its own with working lookups (copy construction and copy assignment, which
// std::map had); a move carries the lookups with it and leaves an empty dict.
TEST(StateDict, CopiesAndMovesKeepTheirLookups) {
  nn::StateDict original{{"a", full({1}, 1.0)}, {"b", full({1}, 2.0)}, {"c", full({1}, 3.0)}};
  nn::StateDict copy(original);
  nn::StateDict assigned{{"old", full({1}, 9.0)}};
  assigned = original;
  for (nn::StateDict* state : {&copy, &assigned}) {
    EXPECT_EQ(keys_of(*state), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(state->count("old"), 0u);
    state->erase("a");
    (*state)["d"] = full({1}, 4.0);
    EXPECT_EQ(keys_of(*state), (std::vector<std::string>{"b", "c", "d"}));
    EXPECT_EQ(state->at("c").item<double>(), 3.0);
    EXPECT_EQ(state->find("d")->second.item<double>(), 4.0);
  }
  EXPECT_EQ(keys_of(original), (std::vector<std::string>{"a", "b", "c"})) << "the copies are the original's own";
  EXPECT_EQ(original.at("a").item<double>(), 1.0);
  EXPECT_EQ(original.count("d"), 0u);

  nn::StateDict moved(std::move(copy));
  EXPECT_EQ(keys_of(moved), (std::vector<std::string>{"b", "c", "d"}));
  EXPECT_EQ(moved.at("d").item<double>(), 4.0);
  nn::StateDict move_assigned{{"old", full({1}, 9.0)}};
  move_assigned = std::move(moved);
  EXPECT_EQ(keys_of(move_assigned), (std::vector<std::string>{"b", "c", "d"}));
  EXPECT_EQ(move_assigned.at("b").item<double>(), 2.0);
  EXPECT_EQ(move_assigned.count("old"), 0u);
  move_assigned["e"] = full({1}, 5.0);
  EXPECT_EQ(move_assigned.at("e").item<double>(), 5.0);
}

// As std::map's (the type it replaced): a reference from at() or [] stays valid while other names
// are added or erased, so renaming a key as state["new"] = state.at("old") reads a live tensor.
TEST(StateDict, ReferencesStayValidAcrossInsertionsAndErasures) {
  nn::StateDict state;
  state["first"] = full({1}, 1.0);
  state["gone"] = full({1}, 2.0);
  Tensor& first = state.at("first");
  const Tensor* const where = &first;
  for (int i = 0; i < 100; ++i) state.emplace("extra." + std::to_string(i), full({1}, 0.0));
  EXPECT_EQ(&state.at("first"), where) << "an insertion moved the tensor under 'first'";
  state.erase("gone");
  EXPECT_EQ(&state.at("first"), where) << "erasing another name moved the tensor under 'first'";
  first = full({1}, 7.0);
  EXPECT_EQ(state.at("first").item<double>(), 7.0);

  nn::StateDict small{{"old", full({1}, 3.0)}};
  small["new"] = small.at("old");  // the right side is read before [] adds "new"
  small.erase("old");
  EXPECT_EQ(keys_of(small), std::vector<std::string>{"new"});
  EXPECT_EQ(small.at("new").item<double>(), 3.0);
}

struct StackImpl : nn::Module {
  StackImpl() {
    register_buffer("steps", zeros({1}));
    encoder = register_module("encoder", Encoder());
    layers = register_module("layers", nn::ModuleList());
    for (int i = 0; i < 11; ++i) layers->push_back(nn::Linear(2, 2));
    register_parameter("scale", ones({1}));  // registered last, but its module's own: listed first
  }
  Tensor forward(const Tensor& x) override { return x; }
  Encoder encoder{nullptr};
  nn::ModuleList layers{nullptr};
};
HWARO_MODULE(Stack);

TEST(StateDict, AModulesStateDictIsInPyTorchsOrder) {
  Stack stack;
  std::vector<std::string> expected{"scale", "steps", "encoder.running", "encoder.fc1.weight", "encoder.fc1.bias",
                                    "encoder.fc2.weight"};
  for (int i = 0; i < 11; ++i) {
    expected.push_back("layers." + std::to_string(i) + ".weight");
    expected.push_back("layers." + std::to_string(i) + ".bias");
  }
  const nn::StateDict state = stack->state_dict();
  EXPECT_EQ(keys_of(state), expected) << "\"layers.10\" after \"layers.9\", not after \"layers.1\"";
  // Through a file every value comes back, whatever the order load() returns them in (by name):
  // the order of a module's state_dict() is its registrations', not the file's.
  ScratchDir dir;
  const std::string path = dir.file("stack.safetensors");
  save(state, path);
  Stack other;
  other->load_state_dict(load(path));
  for (const auto& [name, tensor] : state) {
    EXPECT_TRUE(all_close(values_of(other->state_dict().at(name)), values_of(tensor), 0, 0)) << name;
  }
}

}  // namespace
}  // namespace hwaro::test
