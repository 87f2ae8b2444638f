// SequentialLR: the lrs of one scheduler after another, switching at the milestones. Each
// scheduler is closed-form, so the one in charge at an epoch is asked for its lr at that epoch
// less the milestone where it took over: PyTorch's step(0) at the switch, then its own steps.
#include <algorithm>
#include <utility>

#include "hwaro/errors.h"
#include "hwaro/optim/lr_scheduler.h"

namespace hwaro::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<std::int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  HWARO_CHECK(!schedulers_.empty(), "SequentialLR: expected at least one scheduler");
  HWARO_CHECK(schedulers_.size() == milestones_.size() + 1,
              "SequentialLR: expected one more scheduler than milestones, but got ", schedulers_.size(),
              " schedulers and ", milestones_.size(), " milestones");
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    HWARO_CHECK(schedulers_[i] != nullptr, "SequentialLR: scheduler ", i, " is empty");
    HWARO_CHECK(&schedulers_[i]->optimizer_ == &optimizer, "SequentialLR: expected all schedulers to belong to ",
                "the same optimizer, but scheduler ", i, " was made for another one");
  }
  for (std::size_t i = 0; i < milestones_.size(); ++i) {
    HWARO_CHECK(milestones_[i] > (i == 0 ? 0 : milestones_[i - 1]), "SequentialLR: expected increasing positive ",
                "milestones, but milestone ", i, " is ", milestones_[i]);
  }
  apply();
}

std::pair<const LRScheduler*, std::int64_t> SequentialLR::in_charge(std::int64_t epoch) const {
  // upper_bound is PyTorch's bisect_right: at a milestone the next scheduler has taken over.
  const auto index = static_cast<std::size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) -
                                              milestones_.begin());
  return {schedulers_[index].get(), index == 0 ? epoch : epoch - milestones_[index - 1]};
}

double SequentialLR::lr_at(std::int64_t epoch, std::size_t group) const {
  const auto [scheduler, own_epoch] = in_charge(epoch);
  return scheduler->lr_at(own_epoch, group);
}

std::optional<double> SequentialLR::momentum_at(std::int64_t epoch, std::size_t group) const {
  const auto [scheduler, own_epoch] = in_charge(epoch);
  return scheduler->momentum_at(own_epoch, group);
}

void SequentialLR::load_state_dict(const std::map<std::string, Tensor>& state) {
  LRScheduler::load_state_dict(state);  // all or nothing; the lrs were set with the schedulers' old base lrs
  for (const auto& scheduler : schedulers_) scheduler->base_lrs_ = base_lrs_;
  apply_epoch(last_epoch_);
}

}  // namespace hwaro::optim
