// The schedulers whose lr is a group's base lr times a factor of the epoch, each in PyTorch's
// closed form (_get_closed_form_lr): MultiStepLR, ExponentialLR, LinearLR and LambdaLR.
#include <algorithm>
#include <cmath>
#include <utility>

#include "hwaro/errors.h"
#include "hwaro/optim/lr_scheduler.h"

namespace hwaro::optim {

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  apply();
}

double MultiStepLR::lr_at(std::int64_t epoch, std::size_t group) const {
  // upper_bound is Python's bisect_right: a milestone equal to the epoch has been reached.
  const auto reached = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(reached));
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  apply();
}

double ExponentialLR::lr_at(std::int64_t epoch, std::size_t group) const {
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(epoch));
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, std::int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  HWARO_CHECK(start_factor > 0 && start_factor <= 1, "LinearLR: expected start_factor in (0, 1], found ",
              start_factor);
  HWARO_CHECK(end_factor >= 0 && end_factor <= 1, "LinearLR: expected end_factor in [0, 1], found ", end_factor);
  HWARO_CHECK(total_iters > 0, "LinearLR: expected total_iters > 0, found ", total_iters);
  apply();
}

double LinearLR::lr_at(std::int64_t epoch, std::size_t group) const {
  const double progress = static_cast<double>(std::min(total_iters_, epoch));
  return base_lrs_[group] *
         (start_factor_ + (end_factor_ - start_factor_) * progress / static_cast<double>(total_iters_));
}

namespace {

std::vector<LambdaLR::LrLambda> checked_lambdas(std::vector<LambdaLR::LrLambda> lr_lambdas, std::size_t groups) {
  HWARO_CHECK(lr_lambdas.size() == groups, "LambdaLR: expected ", groups, " lr_lambdas (one per parameter group), ",
              "found ", lr_lambdas.size(), "; pass one function to use it for every group");
  for (std::size_t g = 0; g < groups; ++g) {
    HWARO_CHECK(static_cast<bool>(lr_lambdas[g]), "LambdaLR: the lr_lambda of parameter group ", g, " is empty");
  }
  return lr_lambdas;
}

}  // namespace

LambdaLR::LambdaLR(Optimizer& optimizer, LrLambda lr_lambda)
    : LambdaLR(optimizer, std::vector<LrLambda>(optimizer.param_groups().size(), lr_lambda)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas)
    : LRScheduler(optimizer),
      lr_lambdas_(checked_lambdas(std::move(lr_lambdas), optimizer.param_groups().size())) {
  apply();
}

double LambdaLR::lr_at(std::int64_t epoch, std::size_t group) const {
  return base_lrs_[group] * lr_lambdas_[group](epoch);
}

}  // namespace hwaro::optim
