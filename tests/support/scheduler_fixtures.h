#pragma once
// What the LR scheduler tests share: an optimiser with two parameter groups, so that every
// schedule is checked for a group of its own base lr.
#include <memory>
#include <vector>

#include "hwaro/hwaro.h"

namespace hwaro::test {

// SGD (momentum 0.9, for the schedulers that cycle the momentum too) with two groups of the given lrs.
inline std::unique_ptr<optim::SGD> make_two_group_sgd(double lr0, double lr1) {
  auto opt = std::make_unique<optim::SGD>(std::vector<Tensor>{zeros({3}).set_requires_grad(true)},
                                          optim::SGDOptions{.lr = lr0, .momentum = 0.9});
  opt->add_param_group({zeros({2}).set_requires_grad(true)}, lr1);
  return opt;
}

}  // namespace hwaro::test
