// EpochProgress: "epoch 2/5 [########......]  301/469  41234 samples/s  loss 0.4123  ETA 3s".
#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <ostream>

namespace hwaro_cli {

ProgressStyle progress_style(const std::string& flag) {
  if (flag == "bar") return ProgressStyle::Bar;
  if (flag == "lines") return ProgressStyle::Lines;
  if (flag == "none") return ProgressStyle::None;
  return ::isatty(STDOUT_FILENO) ? ProgressStyle::Bar : ProgressStyle::Lines;
}

EpochProgress::EpochProgress(ProgressStyle style, std::ostream& out, int epoch, int epochs, std::size_t total_batches,
                             std::size_t first_batch)
    : style_(style), out_(out), epoch_(epoch), epochs_(epochs), total_(total_batches), first_(first_batch) {
  next_line_at_ = first_ + (total_ + 9) / 10;
}

void EpochProgress::update(std::size_t batches_done, std::size_t samples_done,
                           const std::function<double()>& running_loss) {
  if (style_ == ProgressStyle::None) return;
  const auto now = std::chrono::steady_clock::now();
  const bool last = batches_done == total_;
  if (style_ == ProgressStyle::Bar) {
    if (!last && now - last_draw_ < std::chrono::milliseconds(100)) return;
  } else if (!last && batches_done < next_line_at_) {
    return;
  } else {
    next_line_at_ += (total_ + 9) / 10;
  }
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(samples_done) / seconds : 0.0;
  const std::size_t run = batches_done - first_;
  const double eta = run > 0 ? seconds * static_cast<double>(total_ - batches_done) / static_cast<double>(run) : 0.0;
  print(batches_done, running_loss(), rate, eta);
}

void EpochProgress::print(std::size_t batches_done, double loss, double samples_per_second, double eta_seconds) {
  char stats[160];
  std::snprintf(stats, sizeof stats, "%5zu/%zu  %8.0f samples/s  loss %.4f  ETA %.0fs", batches_done, total_,
                samples_per_second, loss, eta_seconds);
  const std::string head = "epoch " + std::to_string(epoch_) + "/" + std::to_string(epochs_) + " ";
  if (style_ == ProgressStyle::Lines) {
    out_ << head << stats << "\n" << std::flush;
    return;
  }
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total_ > 0 ? kWidth * batches_done / total_ : kWidth;
  out_ << "\r" << head << "[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << stats
       << "\x1b[K" << std::flush;  // erase what a longer previous line left
}

void EpochProgress::finish() {
  if (style_ == ProgressStyle::Bar) out_ << "\r\x1b[K" << std::flush;
}

}  // namespace hwaro_cli
