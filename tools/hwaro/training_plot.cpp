// The SVG plot `hwaro train` writes at the end: loss (train and test) and test accuracy per epoch,
// two panels side by side, plain SVG 1.1 that any browser shows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "training_metrics.h"

namespace hwaro_cli {
namespace {

struct Series {
  std::string label;
  std::string colour;
  std::vector<double> values;  // one per epoch
};

struct Panel {
  double x, y, width, height;  // the plotting area, in SVG units
};

std::string number(double v, int decimals) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// A step of 1, 2 or 5 times a power of ten that gives about `ticks` ticks over [lo, hi].
double nice_step(double lo, double hi, int ticks) {
  const double raw = std::max((hi - lo) / ticks, 1e-12);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10.0 * power;
}

void draw_panel(std::string& svg, const Panel& p, const std::string& title, const std::vector<Series>& series,
                int epochs, int y_decimals) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : series) {
    for (double v : s.values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(hi > lo)) {  // one point, or a flat line
    lo -= 0.5;
    hi += 0.5;
  }
  const double step = nice_step(lo, hi, 5);
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  auto px = [&](int epoch) { return epochs == 1 ? p.x + p.width / 2 : p.x + p.width * (epoch - 1) / (epochs - 1); };
  auto py = [&](double v) { return p.y + p.height * (hi - v) / (hi - lo); };

  svg += "<text x=\"" + number(p.x + p.width / 2, 1) + "\" y=\"" + number(p.y - 12, 1) +
         "\" text-anchor=\"middle\" font-weight=\"bold\">" + escape(title) + "</text>\n";
  svg += "<rect x=\"" + number(p.x, 1) + "\" y=\"" + number(p.y, 1) + "\" width=\"" + number(p.width, 1) +
         "\" height=\"" + number(p.height, 1) + "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (double v = lo; v <= hi + step / 2; v += step) {
    svg += "<line x1=\"" + number(p.x, 1) + "\" x2=\"" + number(p.x + p.width, 1) + "\" y1=\"" + number(py(v), 1) +
           "\" y2=\"" + number(py(v), 1) + "\" stroke=\"#ddd\"/>\n";
    svg += "<text x=\"" + number(p.x - 6, 1) + "\" y=\"" + number(py(v) + 4, 1) + "\" text-anchor=\"end\">" +
           number(v, y_decimals) + "</text>\n";
  }
  const int every = std::max(1, epochs / 10);
  for (int e = 1; e <= epochs; e += every) {
    svg += "<text x=\"" + number(px(e), 1) + "\" y=\"" + number(p.y + p.height + 16, 1) +
           "\" text-anchor=\"middle\">" + std::to_string(e) + "</text>\n";
  }
  svg += "<text x=\"" + number(p.x + p.width / 2, 1) + "\" y=\"" + number(p.y + p.height + 34, 1) +
         "\" text-anchor=\"middle\">epoch</text>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    std::string points;
    for (std::size_t e = 0; e < s.values.size(); ++e) {
      points += number(px(static_cast<int>(e) + 1), 1) + "," + number(py(s.values[e]), 1) + " ";
    }
    svg += "<polyline fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    for (std::size_t e = 0; e < s.values.size(); ++e) {
      svg += "<circle r=\"3\" fill=\"" + s.colour + "\" cx=\"" + number(px(static_cast<int>(e) + 1), 1) +
             "\" cy=\"" + number(py(s.values[e]), 1) + "\"/>\n";
    }
    const double ly = p.y + 16 + 18 * static_cast<double>(i);
    svg += "<line x1=\"" + number(p.x + p.width - 110, 1) + "\" x2=\"" + number(p.x + p.width - 90, 1) + "\" y1=\"" +
           number(ly - 4, 1) + "\" y2=\"" + number(ly - 4, 1) + "\" stroke=\"" + s.colour +
           "\" stroke-width=\"2\"/>\n";
    svg += "<text x=\"" + number(p.x + p.width - 84, 1) + "\" y=\"" + number(ly, 1) + "\">" + escape(s.label) +
           "</text>\n";
  }
}

}  // namespace

std::string training_plot_svg(const std::vector<EpochMetrics>& history, const std::string& title) {
  Series train_loss{"train loss", "#1f77b4", {}}, test_loss{"test loss", "#ff7f0e", {}};
  Series accuracy{"test accuracy", "#2ca02c", {}};
  for (const auto& m : history) {
    train_loss.values.push_back(m.train_loss);
    test_loss.values.push_back(m.test_loss);
    accuracy.values.push_back(100.0 * m.test_accuracy);
  }
  const int epochs = static_cast<int>(history.size());
  std::string svg =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"380\" viewBox=\"0 0 900 380\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"900\" height=\"380\" fill=\"white\"/>\n"
      "<text x=\"450\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
      escape(title) + "</text>\n";
  if (epochs > 0) {
    draw_panel(svg, {60, 70, 360, 240}, "loss (cross-entropy)", {train_loss, test_loss}, epochs, 2);
    draw_panel(svg, {510, 70, 360, 240}, "test accuracy (%)", {accuracy}, epochs, 1);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hwaro_cli
