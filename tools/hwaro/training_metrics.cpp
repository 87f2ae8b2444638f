// EpochMetrics as JSON lines (nlohmann-json).
#include "training_metrics.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "hwaro/errors.h"

namespace hwaro_cli {

std::string to_json_line(const EpochMetrics& m) {
  const nlohmann::json line{{"epoch", m.epoch},
                            {"train_loss", m.train_loss},
                            {"test_loss", m.test_loss},
                            {"test_accuracy", m.test_accuracy},
                            {"epoch_seconds", m.epoch_seconds},
                            {"samples_per_second", m.samples_per_second},
                            {"loader_waited_fraction", m.loader_waited_fraction},
                            {"lr", m.lr},
                            {"device", m.device}};
  return line.dump() + "\n";
}

std::string to_json_lines(const std::vector<EpochMetrics>& history) {
  std::string out;
  for (const auto& m : history) out += to_json_line(m);
  return out;
}

std::vector<EpochMetrics> parse_json_lines(const std::string& text, const std::string& source) {
  std::vector<EpochMetrics> history;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      const auto j = nlohmann::json::parse(line);
      EpochMetrics m;
      m.epoch = j.at("epoch").get<int>();
      m.train_loss = j.at("train_loss").get<double>();
      m.test_loss = j.at("test_loss").get<double>();
      m.test_accuracy = j.at("test_accuracy").get<double>();
      m.epoch_seconds = j.at("epoch_seconds").get<double>();
      m.samples_per_second = j.at("samples_per_second").get<double>();
      m.loader_waited_fraction = j.at("loader_waited_fraction").get<double>();
      m.lr = j.at("lr").get<double>();
      m.device = j.at("device").get<std::string>();
      history.push_back(m);
    } catch (const nlohmann::json::exception& e) {
      throw hwaro::Error(source + ": metrics line " + std::to_string(number) + " is not a metrics record (" +
                         e.what() + ")");
    }
  }
  return history;
}

}  // namespace hwaro_cli
