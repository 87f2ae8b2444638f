// Tensor::str() and operator<<: PyTorch's text (torch/_tensor_str.py with its default print
// options), then shape, dtype and device, which hwaro always prints:
//   tensor([[ 0.1234, -1.5000],
//           [ 2.0000,  3.0000]], shape=[2, 2], dtype=float32, device=cpu)
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "hwaro/tensor.h"

namespace hwaro {

namespace {

constexpr std::int64_t kThreshold = 1000;  // more elements than this: summarise with "..."
constexpr std::int64_t kEdgeItems = 3;     // items kept at each end of a summarised dimension
constexpr std::int64_t kLineWidth = 80;
constexpr int kPrecision = 4;

// Reads elements of a CPU tensor by multi-index, through its strides.
class Reader {
 public:
  explicit Reader(const Tensor& t)
      : base_(static_cast<const char*>(t.data_ptr())), dtype_(t.dtype()), strides_(t.strides().vec()) {}

  const char* address(const std::vector<std::int64_t>& index) const {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * strides_[d];
    return base_ + offset * static_cast<std::int64_t>(element_size(dtype_));
  }
  double real(const std::vector<std::int64_t>& index) const {
    return visit_dtype(dtype_, [&]<typename T>() {
      return static_cast<double>(static_cast<float_or_self_t<T>>(*reinterpret_cast<const T*>(address(index))));
    });
  }
  // Integers and bools as Python prints them.
  std::string text(const std::vector<std::int64_t>& index) const {
    return visit_dtype(dtype_, [&]<typename T>() -> std::string {
      const T v = *reinterpret_cast<const T*>(address(index));
      if constexpr (std::is_same_v<T, bool>) {
        return v ? "True" : "False";
      } else {
        return std::to_string(static_cast<std::int64_t>(static_cast<float_or_self_t<T>>(v)));
      }
    });
  }

 private:
  template <typename T>
  using float_or_self_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

  const char* base_;
  DType dtype_;
  std::vector<std::int64_t> strides_;
};

std::string printf_double(const char* format, int width, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, width, kPrecision, value);
  return buffer;
}

// An integral float as torch prints it: "3.".
std::string integral_text(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.0f.", value);
  return buffer;
}

// Python spells non-finite floats "nan", "inf", "-inf" (glibc would print "-nan").
std::string non_finite(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

// One formatting for all shown elements (torch's _Formatter): fixed with 4 decimals, integral
// floats with a trailing ".", or scientific when the magnitudes span too much.
class Formatter {
 public:
  Formatter(bool floating, const Reader& reader, const std::vector<std::vector<std::int64_t>>& shown)
      : floating_(floating), reader_(reader) {
    if (!floating_) {
      for (const auto& index : shown) max_width_ = std::max(max_width_, static_cast<int>(reader_.text(index).size()));
      return;
    }
    std::vector<double> values;  // nonzero and finite
    for (const auto& index : shown) {
      const double v = reader_.real(index);
      if (std::isfinite(v) && v != 0.0) values.push_back(v);
    }
    if (values.empty()) return;
    double lo = std::abs(values[0]), hi = lo;
    for (double v : values) {
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double v : values) {
      if (sci_mode_) {
        max_width_ = std::max(max_width_, static_cast<int>(printf_double("%*.*e", 0, v).size()));
      } else if (int_mode_) {
        max_width_ = std::max(max_width_, static_cast<int>(integral_text(v).size()));
      } else {
        max_width_ = std::max(max_width_, static_cast<int>(printf_double("%*.*f", 0, v).size()));
      }
    }
  }

  int width() const { return max_width_; }

  std::string format(const std::vector<std::int64_t>& index) const {
    std::string s;
    if (!floating_) {
      s = reader_.text(index);
    } else {
      const double v = reader_.real(index);
      if (!std::isfinite(v)) {
        s = non_finite(v);
      } else if (sci_mode_) {
        s = printf_double("%*.*e", 0, v);
      } else if (int_mode_) {
        s = integral_text(v);
      } else {
        s = printf_double("%*.*f", 0, v);
      }
    }
    const int pad = std::max<int>(0, max_width_ - static_cast<int>(s.size()));
    return s.insert(0, static_cast<std::size_t>(pad), ' ');
  }

 private:
  bool floating_;
  const Reader& reader_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  int max_width_ = 1;  // an integral float's width counts its "."
};

// The indices shown along a dimension of `size`; -1 marks the "..." of a summarised one.
std::vector<std::int64_t> shown_along(std::int64_t size, bool summarize) {
  std::vector<std::int64_t> out;
  if (summarize && size > 2 * kEdgeItems) {
    for (std::int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    out.push_back(-1);
    for (std::int64_t i = size - kEdgeItems; i < size; ++i) out.push_back(i);
  } else {
    for (std::int64_t i = 0; i < size; ++i) out.push_back(i);
  }
  return out;
}

class Printer {
 public:
  Printer(const Tensor& host, bool summarize)
      : sizes_(host.sizes().vec()), summarize_(summarize), reader_(host),
        formatter_(host.is_floating_point(), reader_, collect()) {}

  std::string render() {
    std::vector<std::int64_t> index;
    if (sizes_.empty()) return formatter_.format(index);
    return render_dim(index, /*indent=*/7);  // the width of "tensor("
  }

 private:
  std::vector<std::vector<std::int64_t>> collect() const {
    std::vector<std::vector<std::int64_t>> shown;
    std::vector<std::int64_t> index;
    collect_dim(index, shown);
    return shown;
  }
  void collect_dim(std::vector<std::int64_t>& index, std::vector<std::vector<std::int64_t>>& shown) const {
    if (index.size() == sizes_.size()) {
      shown.push_back(index);
      return;
    }
    for (std::int64_t i : shown_along(sizes_[index.size()], summarize_)) {
      if (i < 0) continue;
      index.push_back(i);
      collect_dim(index, shown);
      index.pop_back();
    }
  }

  std::string render_dim(std::vector<std::int64_t>& index, std::int64_t indent) {
    const std::size_t d = index.size();
    const std::size_t remaining = sizes_.size() - d;
    std::vector<std::string> parts;
    for (std::int64_t i : shown_along(sizes_[d], summarize_)) {
      if (i < 0) {
        parts.emplace_back(remaining == 1 ? " ..." : "...");
        continue;
      }
      index.push_back(i);
      parts.push_back(remaining == 1 ? formatter_.format(index) : render_dim(index, indent + 1));
      index.pop_back();
    }
    std::string out = "[";
    if (remaining == 1) {  // a row: wrapped at the line width
      const std::int64_t per_line = std::max<std::int64_t>(1, (kLineWidth - indent) / (formatter_.width() + 2));
      for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k > 0 && static_cast<std::int64_t>(k) % per_line == 0) {
          out.append(",\n").append(static_cast<std::size_t>(indent + 1), ' ');
        } else if (k > 0) {
          out.append(", ");
        }
        out.append(parts[k]);
      }
    } else {
      std::string separator(",");
      separator.append(remaining - 1, '\n').append(static_cast<std::size_t>(indent + 1), ' ');
      for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k > 0) out.append(separator);
        out.append(parts[k]);
      }
    }
    return out + "]";
  }

  std::vector<std::int64_t> sizes_;
  bool summarize_;
  Reader reader_;
  Formatter formatter_;
};

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  // Other devices' memory is read through a copy on the CPU.
  const Tensor host = is_cpu() ? *this : cpu();
  std::ostringstream out;
  out << "tensor(";
  if (numel() == 0) {
    out << "[]";
  } else {
    out << Printer(host, numel() > kThreshold).render();
  }
  out << ", shape=" << sizes() << ", dtype=" << dtype() << ", device=" << device();
  if (requires_grad()) out << ", requires_grad=True";
  out << ")";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << t.str(); }

}  // namespace hwaro
