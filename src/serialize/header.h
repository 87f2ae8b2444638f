#pragma once
// The JSON header of a safetensors file: building it for save(), and parsing plus validating it for load().
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hwaro/dtype.h"

namespace hwaro::serialize {

// The header is at most this long (the limit the Python package enforces too).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

struct TensorEntry {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte offsets into the data section, [begin, end)
  std::uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> tensors;  // in data order (by begin)
  std::map<std::string, std::string> metadata;
};

// The header bytes for `tensors` (whose offsets the caller has laid out back to back) and `metadata`,
// compact JSON padded with spaces to a multiple of 8. Throws hw::Error for strings that are not UTF-8.
std::string build_header(const std::vector<TensorEntry>& tensors, const std::map<std::string, std::string>& metadata,
                         const std::string& path);

// Parses `json` (the N header bytes) and checks every entry, and that the entries tile a data section
// of `data_bytes` bytes exactly. `path` names the file in error messages.
Header parse_header(const std::string& json, std::uint64_t data_bytes, const std::string& path);

}  // namespace hwaro::serialize
