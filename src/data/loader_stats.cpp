// LoaderStats: the starvation verdict.
#include <cmath>

#include "hwaro/data/dataloader.h"
#include "hwaro/errors.h"

namespace hwaro::data {

namespace {
// Waiting more than this share of the time means the GPU (or CPU) sits idle for data.
constexpr double kInputBoundShare = 0.2;
}  // namespace

double LoaderStats::waited_fraction() const {
  const double total = wait_seconds + compute_seconds;
  return total > 0 ? wait_seconds / total : 0.0;
}

std::string LoaderStats::verdict(int num_workers) const {
  if (batches == 0) return "no batches loaded yet";
  const int percent = static_cast<int>(std::lround(100.0 * waited_fraction()));
  if (waited_fraction() > kInputBoundShare) {
    const char* advice = num_workers == 0 ? "set num_workers > 0" : "raise num_workers";
    return detail::str_cat("input-bound: the loop waited ", percent, "% of the time; ", advice);
  }
  return detail::str_cat("compute-bound: the loop waited ", percent, "% of the time; data loading keeps up");
}

}  // namespace hwaro::data
