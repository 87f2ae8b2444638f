#pragma once
// `hwaro train`'s work: the guide's loop (§3.2) on a real data set. Every batch goes to the model's
// device; progress while it runs; after each epoch an evaluation, a summary line, the metrics file,
// the plot and a checkpoint. Returns the exit code: 0, or 130 after Ctrl-C (checkpoint saved).
#include <iosfwd>

#include "train_options.h"

namespace hwaro_cli {

int run_training(const TrainOptions& options, std::ostream& out);

}  // namespace hwaro_cli
