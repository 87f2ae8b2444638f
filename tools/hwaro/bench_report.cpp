// Ratios, the table and the JSON of `hwaro bench`.
#include "bench_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace hwaro_cli {
namespace {

const BenchDevice* find_device(const BenchReport& report, const std::string& device) {
  for (const auto& d : report.devices) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// Three significant figures at most, without a mantissa-exponent form for readable numbers.
std::string readable(double value) {
  if (value >= 100) return fixed(value, 0);
  if (value >= 10) return fixed(value, 1);
  if (value >= 1) return fixed(value, 2);
  return fixed(value, 3);
}

// A ratio: `decimals` places from 1 up, two significant figures below 1, so that a small one
// (a GPU train step at 0.15% of its peak, a tiny matmul at 0.04x on the GPU) never reads as 0.
std::string ratio_text(double value, int decimals) {
  if (value >= 1) return fixed(value, decimals);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2g", value);
  return buffer;
}

std::string pad(const std::string& text, std::size_t width, bool right_align) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right_align ? fill + text : text + fill;
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

void derive_ratios(BenchReport& report) {
  for (auto& row : report.rows) {
    const BenchDevice* device = find_device(report, row.device);
    if (!row.flops) {
      if (row.peak_note.empty()) row.peak_note = "n/a: FLOPs of this workload not counted";
    } else if (device == nullptr || !device->peak.gflops) {
      row.peak_note = "n/a: the device's peak is not known";
    } else {
      const double achieved_gflops = *row.flops / (row.timing.median_ms * 1e-3) / 1e9;
      row.peak_fraction = achieved_gflops / *device->peak.gflops;
    }
    if (row.device == "cpu") continue;
    for (const auto& other : report.rows) {
      if (other.device == "cpu" && other.workload == row.workload) {
        row.speedup_vs_cpu = other.timing.median_ms / row.timing.median_ms;
      }
    }
  }
}

std::string format_table(const BenchReport& report) {
  std::ostringstream out;
  out << "hwaro bench, " << report.date_utc << (report.quick ? " (--quick: few runs, small sizes)" : "") << "\n";
  out << "CPU: " << report.cpu_model << ", " << report.logical_cores << " logical cores, hwaro uses " << report.threads
      << " threads\n";
  if (!report.blas_note.empty()) out << report.blas_note << "\n";
  for (const auto& d : report.devices) {
    out << "  " << d.device << " (" << d.name << ") float32 peak: "
        << (d.peak.gflops ? readable(*d.peak.gflops) + " GFLOP/s, " + d.peak.how : d.peak.how) << "\n";
  }
  if (report.load_before && report.load_after) {
    const bool busy = std::max(*report.load_before, *report.load_after) > report.logical_cores;
    out << "load average: " << fixed(*report.load_before, 2) << " before, " << fixed(*report.load_after, 2) << " after, on "
        << report.logical_cores << " cores"
        << (busy ? ": the machine was busy, so these times include waiting for a core and are slower than on a "
                   "quiet machine"
                 : "")
        << "\n";
  }
  if (!report.gpu_note.empty()) out << report.gpu_note << "\n";
  out << "\n";

  const std::vector<std::string> header = {"workload", "device", "runs", "median ms", "p10-p90 ms",
                                           "throughput", "of peak", "GPU/CPU"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : report.rows) {
    cells.push_back({row.workload, row.device, std::to_string(row.timing.runs), readable(row.timing.median_ms),
                     readable(row.timing.p10_ms) + "-" + readable(row.timing.p90_ms),
                     readable(row.throughput) + " " + row.unit,
                     row.peak_fraction ? ratio_text(*row.peak_fraction * 100, 0) + "%" : "n/a",
                     row.speedup_vs_cpu ? ratio_text(*row.speedup_vs_cpu, 1) + "x" : "-"});
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    widths[c] = header[c].size();
    for (const auto& line : cells) widths[c] = std::max(widths[c], line[c].size());
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      out << (c ? "  " : "") << pad(line[c], widths[c], /*right_align=*/c >= 2);
    }
    out << "\n";
  };
  print_line(header);
  for (const auto& line : cells) print_line(line);

  // Why a column says n/a, once per reason.
  std::vector<std::string> notes;
  for (const auto& row : report.rows) {
    if (!row.peak_fraction && std::find(notes.begin(), notes.end(), row.peak_note) == notes.end()) {
      notes.push_back(row.peak_note);
    }
  }
  for (const auto& note : notes) out << "of peak " << note << "\n";
  for (const auto& skip : report.skipped) {
    out << "not measured: " << skip.workload << " on " << skip.device << ": " << skip.reason << "\n";
  }
  return out.str();
}

nlohmann::json to_json(const BenchReport& report) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : report.devices) {
    devices.push_back({{"device", d.device}, {"name", d.name}, {"peak_gflops", optional_number(d.peak.gflops)},
                       {"peak_how", d.peak.how}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : report.rows) {
    rows.push_back({{"workload", r.workload},
                    {"device", r.device},
                    {"runs", r.timing.runs},
                    {"median_ms", r.timing.median_ms},
                    {"p10_ms", r.timing.p10_ms},
                    {"p90_ms", r.timing.p90_ms},
                    {"throughput", r.throughput},
                    {"throughput_unit", r.unit},
                    {"flops_per_run", optional_number(r.flops)},
                    {"fraction_of_peak", optional_number(r.peak_fraction)},
                    {"fraction_of_peak_note", r.peak_fraction ? "" : r.peak_note},
                    {"speedup_vs_cpu", optional_number(r.speedup_vs_cpu)}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : report.skipped) {
    skipped.push_back({{"workload", s.workload}, {"device", s.device}, {"reason", s.reason}});
  }
  return {{"date_utc", report.date_utc},
          {"quick", report.quick},
          {"cpu", {{"model", report.cpu_model}, {"logical_cores", report.logical_cores}, {"threads", report.threads}}},
          {"load_average", {{"before", optional_number(report.load_before)}, {"after", optional_number(report.load_after)}}},
          {"gpu_note", report.gpu_note},
          {"devices", devices},
          {"results", rows},
          {"skipped", skipped}};
}

}  // namespace hwaro_cli
