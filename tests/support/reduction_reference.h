#pragma once
// Float64 references for reductions: the input's values grouped by output element.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "support/test_support.h"

namespace hwaro::test {

// For each output element (row-major over the kept dims), the input values it reduces, in
// row-major order of the reduced dims (so a value's position is its index along them).
struct Groups {
  std::vector<std::int64_t> kept_sizes, squeezed_sizes;
  std::vector<std::vector<double>> values;
};

inline Groups group_values(const Tensor& x, const std::vector<std::int64_t>& dims) {
  const std::int64_t ndim = x.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(ndim), dims.empty());
  for (std::int64_t d : dims) {
    if (ndim > 0) reduced[static_cast<std::size_t>(d < 0 ? d + ndim : d)] = true;  // 0-dim: 0 and -1 reduce all
  }
  Groups g;
  std::int64_t outputs = 1;
  for (std::int64_t d = 0; d < ndim; ++d) {
    g.kept_sizes.push_back(reduced[d] ? 1 : x.size(d));
    if (!reduced[d]) {
      g.squeezed_sizes.push_back(x.size(d));
      outputs *= x.size(d);
    }
  }
  g.values.resize(static_cast<std::size_t>(outputs));
  const std::vector<double> v = values_of(x);
  std::vector<std::int64_t> index(static_cast<std::size_t>(ndim), 0);
  for (double value : v) {
    std::int64_t out = 0;
    for (std::int64_t d = 0; d < ndim; ++d) {
      if (!reduced[d]) out = out * x.size(d) + index[d];
    }
    g.values[static_cast<std::size_t>(out)].push_back(value);
    for (std::int64_t d = ndim; d-- > 0;) {
      if (++index[d] < x.size(d)) break;
      index[d] = 0;
    }
  }
  return g;
}

inline std::vector<double> reduce_groups(const Groups& g, const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> out;
  for (const auto& group : g.values) out.push_back(f(group));
  return out;
}

inline double ref_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
inline double ref_mean(const std::vector<double>& v) { return ref_sum(v) / static_cast<double>(v.size()); }
inline double ref_var(const std::vector<double>& v, std::int64_t correction) {
  const double m = ref_mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(std::max<std::int64_t>(0, static_cast<std::int64_t>(v.size()) - correction));
}

// All non-empty subsets of the dims of an ndim tensor, odd ones written as negative dims, plus {}.
inline std::vector<std::vector<std::int64_t>> dim_subsets(std::int64_t ndim) {
  std::vector<std::vector<std::int64_t>> out = {{}};
  for (std::int64_t mask = 1; mask < (std::int64_t{1} << ndim); ++mask) {
    std::vector<std::int64_t> dims;
    for (std::int64_t d = 0; d < ndim; ++d) {
      if (mask & (std::int64_t{1} << d)) dims.push_back(d % 2 == 1 ? d - ndim : d);
    }
    out.push_back(dims);
  }
  return out;
}

}  // namespace hwaro::test
