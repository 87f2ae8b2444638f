#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "hwaro/errors.h"
#include "serialize/dtype_names.h"
#include "serialize/header.h"

namespace hwaro::serialize {
namespace {

using nlohmann::json;

// More dimensions than any real tensor has; a bound keeps a hostile header from building huge shapes.
constexpr std::size_t kMaxDims = 64;
// A valid header nests three levels (header, tensor, shape); values nested deeper are not kept, so
// a hostile header cannot build, or recurse through, a structure thousands of levels deep.
constexpr int kMaxNesting = 8;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw Error(detail::str_cat(path, ": ", problem, "; the file is not a valid safetensors file (damaged, "
                                    "truncated, or written by something else)"));
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

// A JSON value for an error message, cut short: a header may hold megabytes in one value.
std::string excerpt(const json& value) {
  constexpr std::size_t kMaxChars = 60;
  std::string text = value.dump();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

std::string offsets_text(const TensorEntry& t) { return detail::str_cat("[", t.begin, ", ", t.end, "]"); }

// Watches the parse for what nlohmann accepts silently: the first key that appears twice in one
// object (nlohmann keeps the last), and nesting deeper than kMaxNesting (not kept at all).
class HeaderParseGuard {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxNesting) {
      too_deep_ = true;
      return false;
    }
    if (event == json::parse_event_t::object_start) {
      open_.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_.empty()) open_.pop_back();
    } else if (event == json::parse_event_t::key && !open_.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_.back().insert(key).second && duplicate_.empty()) duplicate_ = key;
    }
    return true;
  }
  const std::string& duplicate() const { return duplicate_; }
  bool too_deep() const { return too_deep_; }

 private:
  std::vector<std::set<std::string>> open_;
  std::string duplicate_;
  bool too_deep_ = false;
};

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& path) {
  if (value.is_null()) return {};  // the Python package reads "__metadata__": null as no metadata
  if (!value.is_object()) fail(path, detail::str_cat("\"__metadata__\" is a JSON ", value.type_name(), ", expected an object of strings"));
  std::map<std::string, std::string> out;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) {
      fail(path, detail::str_cat("\"__metadata__\" value of '", key, "' is a JSON ", v.type_name(), ", expected a string"));
    }
    out[key] = v.get<std::string>();
  }
  return out;
}

std::uint64_t unsigned_at(const json& array, std::size_t i, const std::string& what, const std::string& path) {
  const json& v = array[i];
  if (!v.is_number_unsigned()) fail(path, detail::str_cat(what, " holds ", excerpt(v), ", expected a non-negative integer"));
  return v.get<std::uint64_t>();
}

TensorEntry parse_entry(const std::string& name, const json& value, const std::string& path) {
  const std::string where = detail::str_cat("tensor '", name, "'");
  if (!value.is_object()) fail(path, detail::str_cat(where, " is a JSON ", value.type_name(), ", expected an object"));
  for (const auto& [key, v] : value.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      fail(path, detail::str_cat(where, " has an unknown field \"", key, "\"; expected only dtype, shape, data_offsets"));
    }
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(field)) fail(path, detail::str_cat(where, " lacks \"", field, "\""));
  }
  TensorEntry t;
  t.name = name;

  const json& dtype = value["dtype"];
  if (!dtype.is_string()) fail(path, detail::str_cat(where, " dtype is ", excerpt(dtype), ", expected a string such as \"F32\""));
  bool known_elsewhere = false;
  const auto parsed = dtype_from_safetensors_name(dtype.get<std::string>(), &known_elsewhere);
  if (!parsed) {
    fail(path, detail::str_cat(where, " has dtype ", excerpt(dtype),
                               known_elsewhere ? ", which hwaro does not support" : ", which is not a safetensors dtype",
                               "; supported: ", supported_safetensors_dtypes()));
  }
  t.dtype = *parsed;

  const json& shape = value["shape"];
  if (!shape.is_array()) fail(path, detail::str_cat(where, " shape is ", excerpt(shape), ", expected an array"));
  if (shape.size() > kMaxDims) fail(path, detail::str_cat(where, " has ", shape.size(), " dimensions; at most ", kMaxDims, " are supported"));
  // The byte size, and the span a tensor of this shape would address (zero dimensions counted as
  // one, as its strides are), must fit in int64. The reference reader refuses an overflowing
  // product even when a later dimension is zero; this also refuses [0, 2^62, 4], whose strides overflow.
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t bytes = element_size(t.dtype);
  std::uint64_t span = bytes;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::uint64_t dim = unsigned_at(shape, i, where + " shape", path);
    const std::uint64_t factor = std::max<std::uint64_t>(dim, 1);
    if (dim > kMax || span > kMax / factor) {
      fail(path, detail::str_cat(where, " shape ", excerpt(shape), " is too large to address"));
    }
    t.shape.push_back(static_cast<std::int64_t>(dim));
    span *= factor;
    bytes *= dim;
  }

  const json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    fail(path, detail::str_cat(where, " data_offsets is ", excerpt(offsets), ", expected [begin, end]"));
  }
  t.begin = unsigned_at(offsets, 0, where + " data_offsets", path);
  t.end = unsigned_at(offsets, 1, where + " data_offsets", path);
  if (t.end < t.begin) fail(path, detail::str_cat(where, " data_offsets ", offsets_text(t), " end before they begin"));
  if (t.end - t.begin != bytes) {
    fail(path, detail::str_cat(where, " data_offsets ", offsets_text(t), " do not match shape ", shape_text(t.shape),
                               " of ", safetensors_dtype_name(t.dtype), " (", bytes, " bytes)"));
  }
  return t;
}

// The entries, sorted by offset, must cover [0, data_bytes) exactly: no gap, no overlap, nothing past the end.
void check_tiling(std::vector<TensorEntry>& tensors, std::uint64_t data_bytes, const std::string& path) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const auto& t : tensors) {
    if (t.begin < covered) {
      fail(path, detail::str_cat("tensor '", t.name, "' data_offsets ", offsets_text(t), " overlap tensor '",
                                 previous->name, "' ", offsets_text(*previous)));
    }
    if (t.begin > covered) {
      fail(path, detail::str_cat("bytes [", covered, ", ", t.begin, ") of the data section belong to no tensor (before '",
                                 t.name, "')"));
    }
    if (t.end > data_bytes) {
      fail(path, detail::str_cat("tensor '", t.name, "' data_offsets ", offsets_text(t), " run past the data section (",
                                 data_bytes, " bytes)"));
    }
    covered = t.end;
    previous = &t;
  }
  if (covered != data_bytes) {
    fail(path, detail::str_cat("the tensors cover ", covered, " bytes of the data section but it holds ", data_bytes,
                               " bytes"));
  }
}

}  // namespace

Header parse_header(const std::string& text, std::uint64_t data_bytes, const std::string& path) {
  // As the format's description says (the reference reader does not check it yet): the JSON object
  // starts at the first byte (writers pad at the end), so a header that parses is an object.
  if (text.empty() || text.front() != '{') fail(path, "its header does not start with '{'");
  HeaderParseGuard guard;
  json root;
  try {
    root = json::parse(text, std::ref(guard));
  } catch (const json::exception& e) {
    fail(path, detail::str_cat("its header is not valid JSON (", e.what(), ")"));
  }
  if (guard.too_deep()) {
    fail(path, detail::str_cat("its header nests JSON values more than ", kMaxNesting, " levels deep"));
  }
  if (!guard.duplicate().empty()) fail(path, detail::str_cat("its header names '", guard.duplicate(), "' twice"));

  Header header;
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") header.metadata = parse_metadata(value, path);
    else header.tensors.push_back(parse_entry(key, value, path));
  }
  check_tiling(header.tensors, data_bytes, path);
  return header;
}

}  // namespace hwaro::serialize
