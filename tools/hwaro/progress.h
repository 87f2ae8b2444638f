#pragma once
// The per-epoch progress of `hwaro train`: a bar redrawn in place on a terminal, or a plain
// line every tenth of the epoch when the output goes to a file or a pipe (CI logs).
#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace hwaro_cli {

enum class ProgressStyle { Bar, Lines, None };

// "auto" picks Bar when `out` is a terminal (stdout), else Lines.
ProgressStyle progress_style(const std::string& flag);

class EpochProgress {
 public:
  EpochProgress(ProgressStyle style, std::ostream& out, int epoch, int epochs, std::size_t total_batches,
                std::size_t first_batch);
  // After each batch. `running_loss` is called only when something is printed (at most ~10 times a
  // second on a terminal), because reading a GPU loss waits for the GPU.
  void update(std::size_t batches_done, std::size_t samples_done, const std::function<double()>& running_loss);
  // Clears the bar so the epoch's summary line can take its place.
  void finish();

 private:
  void print(std::size_t batches_done, double loss, double samples_per_second, double eta_seconds);

  ProgressStyle style_;
  std::ostream& out_;
  int epoch_, epochs_;
  std::size_t total_, first_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  std::size_t next_line_at_ = 0;  // Lines: the batch count of the next line
};

}  // namespace hwaro_cli
