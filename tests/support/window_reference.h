#pragma once
// Float64 references for convolution and pooling, as plain loops over the definitions (no hwaro
// op used): inputs are row-major value vectors as values_of gives them.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace hwaro::test {

struct Window {
  std::int64_t kh, kw, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;  // pooling's: round up, but no window may start in the trailing padding
  std::int64_t out_h(std::int64_t h) const { return out_size(h, kh, sh, ph, dh); }
  std::int64_t out_w(std::int64_t w) const { return out_size(w, kw, sw, pw, dw); }

 private:
  std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d) const {
    const double exact = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
    std::int64_t out = static_cast<std::int64_t>(ceil_mode ? std::ceil(exact) : std::floor(exact)) + 1;
    if (ceil_mode && (out - 1) * s >= in + p) --out;
    return out;
  }
};

// x [n, c, h, w], weight [o, c / groups, kh, kw], bias [o] or empty -> [n, o, oh, ow].
inline std::vector<double> ref_conv2d(const std::vector<double>& x, std::int64_t n, std::int64_t c, std::int64_t h,
                                      std::int64_t w, const std::vector<double>& weight, std::int64_t o,
                                      const std::vector<double>& bias, const Window& g, std::int64_t groups) {
  const std::int64_t oh = g.out_h(h), ow = g.out_w(w), cg = c / groups, og = o / groups;
  std::vector<double> out(static_cast<std::size_t>(n * o * oh * ow));
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t oc = 0; oc < o; ++oc)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          double s = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(oc)];
          const std::int64_t group = oc / og;
          for (std::int64_t ic = 0; ic < cg; ++ic)
            for (std::int64_t ki = 0; ki < g.kh; ++ki)
              for (std::int64_t kj = 0; kj < g.kw; ++kj) {
                const std::int64_t r = i * g.sh - g.ph + ki * g.dh, col = j * g.sw - g.pw + kj * g.dw;
                if (r < 0 || r >= h || col < 0 || col >= w) continue;
                const std::int64_t channel = group * cg + ic;
                s += x[static_cast<std::size_t>(((b * c + channel) * h + r) * w + col)] *
                     weight[static_cast<std::size_t>(((oc * cg + ic) * g.kh + ki) * g.kw + kj)];
              }
          out[static_cast<std::size_t>(((b * o + oc) * oh + i) * ow + j)] = s;
        }
  return out;
}

// planes [p, h, w] -> the maximum of each window and its index r*w + c (the first of equal maxima).
struct MaxPoolResult {
  std::vector<double> values;
  std::vector<std::int64_t> indices;
};
inline MaxPoolResult ref_max_pool2d(const std::vector<double>& x, std::int64_t planes, std::int64_t h, std::int64_t w,
                                    const Window& g) {
  const std::int64_t oh = g.out_h(h), ow = g.out_w(w);
  MaxPoolResult res;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        std::int64_t where = -1;
        for (std::int64_t ki = 0; ki < g.kh; ++ki)
          for (std::int64_t kj = 0; kj < g.kw; ++kj) {
            const std::int64_t r = i * g.sh - g.ph + ki * g.dh, col = j * g.sw - g.pw + kj * g.dw;
            if (r < 0 || r >= h || col < 0 || col >= w) continue;
            const double v = x[static_cast<std::size_t>((p * h + r) * w + col)];
            if (where < 0 || v > best) {
              best = v;
              where = r * w + col;
            }
          }
        res.values.push_back(best);
        res.indices.push_back(where);
      }
  return res;
}

// planes [p, h, w] -> the mean of each window, by PyTorch's divisor rule: divisor_override if
// non-zero; else the window's taps inside the padded input (count_include_pad); else those inside
// the input.
inline std::vector<double> ref_avg_pool2d(const std::vector<double>& x, std::int64_t planes, std::int64_t h,
                                          std::int64_t w, const Window& g, bool count_include_pad = true,
                                          std::int64_t divisor_override = 0) {
  const std::int64_t oh = g.out_h(h), ow = g.out_w(w);
  std::vector<double> out;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        double s = 0;
        std::int64_t in_padded = 0, in_input = 0;
        for (std::int64_t ki = 0; ki < g.kh; ++ki)
          for (std::int64_t kj = 0; kj < g.kw; ++kj) {
            const std::int64_t r = i * g.sh - g.ph + ki, col = j * g.sw - g.pw + kj;
            if (r < h + g.ph && col < w + g.pw) ++in_padded;
            if (r >= 0 && r < h && col >= 0 && col < w) {
              s += x[static_cast<std::size_t>((p * h + r) * w + col)];
              ++in_input;
            }
          }
        const std::int64_t divisor = divisor_override != 0 ? divisor_override : count_include_pad ? in_padded : in_input;
        out.push_back(s / static_cast<double>(divisor));
      }
  return out;
}

// planes [p, h, w] -> PyTorch's adaptive average: window [floor(i*h/oh), ceil((i+1)*h/oh)).
inline std::vector<double> ref_adaptive_avg_pool2d(const std::vector<double>& x, std::int64_t planes, std::int64_t h,
                                                   std::int64_t w, std::int64_t oh, std::int64_t ow) {
  std::vector<double> out;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        const std::int64_t r0 = i * h / oh, r1 = ((i + 1) * h + oh - 1) / oh;
        const std::int64_t c0 = j * w / ow, c1 = ((j + 1) * w + ow - 1) / ow;
        double s = 0;
        for (std::int64_t r = r0; r < r1; ++r)
          for (std::int64_t col = c0; col < c1; ++col) s += x[static_cast<std::size_t>((p * h + r) * w + col)];
        out.push_back(s / static_cast<double>((r1 - r0) * (c1 - c0)));
      }
  return out;
}

}  // namespace hwaro::test
