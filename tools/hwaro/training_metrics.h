#pragma once
// What `hwaro train` measures per epoch, and its JSON-lines form (the metrics file, and the history
// a checkpoint carries so that a resumed run's file and plot cover the whole run).
#include <string>
#include <vector>

namespace hwaro_cli {

struct EpochMetrics {
  int epoch = 0;  // 1-based
  double train_loss = 0;
  double test_loss = 0;
  double test_accuracy = 0;  // fraction in [0, 1]
  double epoch_seconds = 0;
  double samples_per_second = 0;
  double loader_waited_fraction = 0;  // the share of the epoch the loop spent waiting for batches
  double lr = 0;
  std::string device;
};

std::string to_json_line(const EpochMetrics& metrics);  // one line, with its '\n'
// Parses what to_json_lines wrote; anything else is an hw::Error naming `source`.
std::vector<EpochMetrics> parse_json_lines(const std::string& text, const std::string& source);
std::string to_json_lines(const std::vector<EpochMetrics>& history);

// Train and test loss, and test accuracy, against the epoch, as one standalone SVG document.
std::string training_plot_svg(const std::vector<EpochMetrics>& history, const std::string& title);

}  // namespace hwaro_cli
