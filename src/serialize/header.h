#pragma once
// The JSON header of a safetensors file: building it for save(), and parsing plus validating it for load();
// and load_file, the whole file, for hw::load and the checkpoint loader.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwaro/dtype.h"
#include "hwaro/tensor.h"

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

// A whole safetensors file, tensors and metadata read through one open descriptor, so that a save
// replacing the file meanwhile cannot pair one file's metadata with another's tensors.
struct LoadedFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};
LoadedFile load_file(const std::string& path, std::optional<Device> map_location);

// Parses `json` (the N header bytes) and checks every entry, and that the entries tile a data section
// of `data_bytes` bytes exactly. `path` names the file in error messages.
Header parse_header(const std::string& json, std::uint64_t data_bytes, const std::string& path);

}  // namespace hwaro::serialize
