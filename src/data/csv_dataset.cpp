// CsvDataset: a CSV file of numbers, every row and field checked.
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "data/file_bytes.h"
#include "hwaro/data/readers.h"
#include "hwaro/ops.h"

namespace hwaro::data {

namespace {

struct Line {
  std::size_t number;  // 1-based, as an editor shows it
  std::string_view text;
};

bool blank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

std::string_view trim(std::string_view s) {
  const std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// Lines without their "\n" or "\r\n", blank ones skipped, a UTF-8 byte-order mark dropped.
std::vector<Line> split_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Line> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!blank(line)) lines.push_back({number, line});
  }
  return lines;
}

// Reads one file's rows, naming the file, line and column in every error.
class CsvParser {
 public:
  CsvParser(const std::string& path, char delimiter) : path_(path), delimiter_(delimiter) {}

  // The trimmed, unquoted fields of a line.
  std::vector<std::string_view> fields(const Line& line) const {
    std::vector<std::string_view> out;
    std::string_view rest = line.text;
    while (true) {
      const std::size_t end = rest.find(delimiter_);
      out.push_back(unquote(trim(rest.substr(0, end)), line.number, out.size() + 1));
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
    return out;
  }

  double number(std::string_view field, std::size_t line, std::size_t column) const {
    double value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    // A number beyond even double's range (1e400, 1e-400) is result_out_of_range, with the whole field read.
    const bool out_of_range = error == std::errc::result_out_of_range;
    HWARO_CHECK(!field.empty() && (error == std::errc() || out_of_range) && end == field.data() + field.size(),
                where(line, column), "expected a number, found ", quoted(field),
                "; every field but the header's must be a number");
    HWARO_CHECK(!out_of_range && (!std::isfinite(value) || std::abs(value) <= std::numeric_limits<float>::max()),
                where(line, column), quoted(field), " is beyond the range of float32");
    return value;
  }

  std::int64_t whole_number(std::string_view field, std::size_t line, std::size_t column) const {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (!field.empty() && error == std::errc() && end == field.data() + field.size()) return value;
    const double real = number(field, line, column);  // "3.0" is a whole number too
    HWARO_CHECK(std::isfinite(real) && real == std::floor(real) && std::abs(real) <= 9007199254740992.0,
                where(line, column), "the target must be a whole number for target_dtype int64, found ", quoted(field),
                "; use target_dtype = kFloat32 for a real-valued target");
    return static_cast<std::int64_t>(real);
  }

  std::string where(std::size_t line, std::size_t column) const {
    return detail::str_cat("'", path_, "', line ", line, ", column ", column, ": ");
  }
  const std::string& path() const { return path_; }

 private:
  static std::string quoted(std::string_view field) {
    constexpr std::size_t kShown = 40;
    if (field.size() <= kShown) return detail::str_cat("'", field, "'");
    return detail::str_cat("'", field.substr(0, kShown), "...'");
  }

  std::string_view unquote(std::string_view field, std::size_t line, std::size_t column) const {
    const bool wrapped = field.size() >= 2 && field.front() == '"' && field.back() == '"';
    if (wrapped) field = field.substr(1, field.size() - 2);
    HWARO_CHECK(field.find('"') == std::string_view::npos, where(line, column), "a stray or unmatched double quote in ",
                quoted(field), "; quotes may only wrap a whole field, which must not contain the delimiter");
    return field;
  }

  const std::string& path_;
  char delimiter_;
};

std::size_t target_index(const CsvParser& parser, const CsvOptions& options, const std::vector<std::string>& names,
                         std::size_t columns, std::size_t header_line) {
  if (!options.target_name.empty()) {
    HWARO_CHECK(options.header, "'", parser.path(), "': target_name '", options.target_name,
                "' needs a header row; set header = true, or choose the column by target_column");
    std::optional<std::size_t> found;
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (names[c] != options.target_name) continue;
      HWARO_CHECK(!found, parser.where(header_line, c + 1), "the target column '", options.target_name,
                  "' appears twice (also column ", *found + 1, "); choose it by target_column");
      found = c;
    }
    if (!found) {
      std::string listed;
      for (const std::string& name : names) listed += (listed.empty() ? "'" : ", '") + name + "'";
      throw Error(detail::str_cat("'", parser.path(), "': no column named '", options.target_name,
                                  "' in the header; its columns are ", listed));
    }
    return *found;
  }
  const auto n = static_cast<std::int64_t>(columns);
  HWARO_CHECK(options.target_column >= -n && options.target_column < n, "'", parser.path(), "': target_column ",
              options.target_column, " is out of range for its ", columns, " columns; expected -", n, " to ", n - 1);
  return static_cast<std::size_t>(options.target_column < 0 ? options.target_column + n : options.target_column);
}

}  // namespace

CsvDataset::CsvDataset(const std::string& path, CsvOptions options) {
  HWARO_CHECK(options.target_dtype == kInt64 || options.target_dtype == kFloat32, "CsvDataset('", path,
              "'): target_dtype must be int64 (class labels) or float32, got ", options.target_dtype);
  HWARO_CHECK(options.delimiter != '"' && options.delimiter != '\n' && options.delimiter != '\r', "CsvDataset('",
              path, "'): the delimiter cannot be a double quote or a line end");
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  const std::vector<Line> lines =
      split_lines(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  const CsvParser parser(path, options.delimiter);
  HWARO_CHECK(lines.size() > (options.header ? 1u : 0u), "'", path, "' has no data rows",
              options.header ? " after its header" : "", "; a CSV data set needs at least one row of numbers");

  const std::vector<std::string_view> first = parser.fields(lines.front());
  const std::size_t columns = first.size();
  HWARO_CHECK(columns >= 2, parser.where(lines.front().number, 1), "found ", columns,
              " column; a sample needs at least one data column and the target column");
  std::vector<std::string> names;
  if (options.header) names.assign(first.begin(), first.end());
  const std::size_t target = target_index(parser, options, names, columns, lines.front().number);
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (c != target) feature_names_.push_back(names[c]);
  }

  const std::size_t rows = lines.size() - (options.header ? 1 : 0);
  data_ = empty({static_cast<std::int64_t>(rows), static_cast<std::int64_t>(columns - 1)}, {.dtype = kFloat32});
  targets_ = empty({static_cast<std::int64_t>(rows)}, {.dtype = options.target_dtype});
  float* data = data_.data_ptr<float>();
  for (std::size_t r = 0; r < rows; ++r) {
    const Line& line = lines[r + (options.header ? 1 : 0)];
    const std::vector<std::string_view> fields = parser.fields(line);
    HWARO_CHECK(fields.size() == columns, parser.where(line.number, std::min(fields.size(), columns) + 1),
                "expected ", columns, " fields as on line ", lines.front().number, ", found ", fields.size(),
                "; every row must have the same number of columns");
    for (std::size_t c = 0; c < columns; ++c) {
      if (c == target) {
        if (options.target_dtype == kInt64) {
          targets_.data_ptr<std::int64_t>()[r] = parser.whole_number(fields[c], line.number, c + 1);
        } else {
          targets_.data_ptr<float>()[r] = static_cast<float>(parser.number(fields[c], line.number, c + 1));
        }
      } else {
        *data++ = static_cast<float>(parser.number(fields[c], line.number, c + 1));
      }
    }
  }
}

std::size_t CsvDataset::size() const { return static_cast<std::size_t>(data_.size(0)); }

Example CsvDataset::get(std::size_t index) const {
  check_index(index, size(), "CsvDataset");
  const auto i = static_cast<std::int64_t>(index);
  return {data_.select(0, i), targets_.select(0, i)};
}

}  // namespace hwaro::data
