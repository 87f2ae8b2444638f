// ModuleDict (LibTorch's: named children in insertion order, replacement in place) and
// Module::replace_module (a new head for fine-tuning): order, paths, parameters, state_dict keys,
// moves, clones, printout and errors.
#include <string>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace nn = hwaro::nn;

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [name, _] : named) out.push_back(name);
  return out;
}

struct HeadsImpl : nn::Module {
  HeadsImpl() {
    trunk = register_module("trunk", nn::Linear(4, 3));
    heads = register_module("heads", nn::ModuleDict());
    heads->insert("digits", nn::Linear(3, 10));
    heads->insert("parity", nn::Linear(3, 2, nn::LinearOptions{.bias = false}));
  }
  Tensor forward(const Tensor& x) override { return (*heads)["digits"]->forward(trunk->forward(x)); }
  nn::Linear trunk{nullptr};
  nn::ModuleDict heads{nullptr};
};
HWARO_MODULE(Heads);

TEST(ModuleDict, KeepsInsertionOrderAndNamesItsChildren) {
  Heads model;
  EXPECT_EQ(model->heads->keys(), (std::vector<std::string>{"digits", "parity"}));
  EXPECT_EQ(model->heads->size(), 2U);
  EXPECT_FALSE(model->heads->empty());
  EXPECT_TRUE(model->heads->contains("parity"));
  EXPECT_FALSE(model->heads->contains("letters"));
  EXPECT_EQ(names_of(model->named_parameters()),
            (std::vector<std::string>{"trunk.weight", "trunk.bias", "heads.digits.weight", "heads.digits.bias",
                                      "heads.parity.weight"}));
  EXPECT_EQ((*model->heads)["parity"]->path(), "heads.parity");
  std::vector<std::string> iterated;
  for (const auto& [key, module] : *model->heads) {
    iterated.push_back(key);
    EXPECT_EQ(module, (*model->heads)[key]);
  }
  EXPECT_EQ(iterated, model->heads->keys());
  ASSERT_EQ(model->heads->values().size(), 2U);
  EXPECT_EQ(model->heads->values()[1], (*model->heads)["parity"]);

  // Made from a list, in its order (not sorted).
  nn::ModuleDict from_list(std::vector<nn::ModuleDictImpl::Item>{{"z", nn::Linear(1, 1).ptr()}, {"a", nn::ReLU().ptr()}});
  EXPECT_EQ(from_list->keys(), (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(from_list->str(), "ModuleDict(\n  (z): Linear(in_features=1, out_features=1, bias=true)\n  (a): ReLU()\n)");

  // The forward through a looked-up head, and a move of the whole tree.
  EXPECT_EQ(model->forward(randn({5, 4})).sizes(), IntArrayRef({5, 10}));
  model->to(other_device());
  for (const Tensor& p : model->parameters()) EXPECT_EQ(p.device(), other_device());
}

// Inserting a key that is there replaces its module where it stands, as PyTorch's dict
// assignment: the keys keep their order and the old module's parameters are gone.
TEST(ModuleDict, InsertingAnExistingKeyReplacesItInPlace) {
  Heads model;
  const nn::Linear wider(3, 20);
  model->heads->insert("digits", wider);
  EXPECT_EQ(model->heads->keys(), (std::vector<std::string>{"digits", "parity"}));
  EXPECT_EQ((*model->heads)["digits"], wider.ptr());
  EXPECT_EQ(wider->path(), "heads.digits");
  EXPECT_EQ(names_of(model->named_parameters()),
            (std::vector<std::string>{"trunk.weight", "trunk.bias", "heads.digits.weight", "heads.digits.bias",
                                      "heads.parity.weight"}));
  EXPECT_EQ(model->state_dict().at("heads.digits.weight").sizes(), IntArrayRef({20, 3}));
  EXPECT_EQ(model->children().size(), 2U);
  EXPECT_EQ(model->heads->children().size(), 2U);
  EXPECT_EQ(model->forward(randn({2, 4})).sizes(), IntArrayRef({2, 20}));

  // update() inserts each pair in order: one replacement, one new key at the end.
  model->heads->update({{"parity", nn::Linear(3, 2).ptr()}, {"letters", nn::Linear(3, 26).ptr()}});
  EXPECT_EQ(model->heads->keys(), (std::vector<std::string>{"digits", "parity", "letters"}));
  EXPECT_EQ(model->state_dict().count("heads.parity.bias"), 1U);
  EXPECT_EQ(model->state_dict().at("heads.letters.weight").sizes(), IntArrayRef({26, 3}));
}

TEST(ModuleDict, ClonesKeepTheKeysAndWrongUsesAreClearErrors) {
  Heads model;
  const auto clone = model->heads->clone_module();
  EXPECT_EQ(clone->str(), model->heads->str());
  EXPECT_NE(clone->named_children()[0].second, (*model->heads)["digits"]);

  EXPECT_TRUE(throws_with<IndexError>([&] { (*model->heads)["letters"]; },
                                      "ModuleDict: no module 'letters'; the keys are 'digits', 'parity'"));
  EXPECT_TRUE(throws_with<IndexError>([] { (*nn::ModuleDict())["a"]; }, "none (the dict is empty)"));
  EXPECT_TRUE(throws_with<Error>([&] { model->heads->insert("a.b", nn::ReLU()); }, "must be non-empty and contain no '.'"));
  EXPECT_TRUE(throws_with<Error>([&] { model->heads->insert("x", std::shared_ptr<nn::Module>()); }, "empty module"));
  EXPECT_TRUE(throws_with<Error>([&] { model->heads->forward(ones({1})); }, "forward"));
}

// ---------------------------------------------------------------- replace_module

TEST(ReplaceModule, PutsANewChildInTheOldOnesPlace) {
  Heads model;
  const auto old_trunk = model->trunk.ptr();
  model->trunk = model->replace_module("trunk", nn::Linear(4, 3, nn::LinearOptions{.bias = false}));
  EXPECT_NE(model->trunk.ptr(), old_trunk);
  EXPECT_EQ(model->trunk->path(), "trunk");
  EXPECT_EQ(model->named_children()[0].second, model->trunk.ptr());
  EXPECT_EQ(names_of(model->named_parameters()),
            (std::vector<std::string>{"trunk.weight", "heads.digits.weight", "heads.digits.bias",
                                      "heads.parity.weight"}));
  // The optimiser of a fine-tuning run sees the new parameters only.
  for (const Tensor& p : model->parameters()) EXPECT_NE(p.data_ptr<float>(), old_trunk->parameters()[0].data_ptr<float>());

  // A shared_ptr works too, and a child below the root keeps its dotted path.
  const auto head = std::make_shared<nn::LinearImpl>(3, 4);
  EXPECT_EQ(model->heads->replace_module("digits", head), head);
  EXPECT_EQ(head->path(), "heads.digits");

  EXPECT_TRUE(throws_with<Error>([&] { model->replace_module("tail", nn::ReLU()); },
                                 "has no child module 'tail'; register it with register_module first"));
  EXPECT_TRUE(throws_with<Error>([&] { model->replace_module("trunk", std::shared_ptr<nn::Module>()); },
                                 "'trunk' is an empty module"));
}

}  // namespace
}  // namespace hwaro::test
