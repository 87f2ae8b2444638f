#include <nlohmann/json.hpp>

#include "hwaro/errors.h"
#include "serialize/dtype_names.h"
#include "serialize/header.h"

namespace hwaro::serialize {

std::string build_header(const std::vector<TensorEntry>& tensors, const std::map<std::string, std::string>& metadata,
                         const std::string& path) {
  // ordered_json keeps insertion order: metadata first, then tensors in data order, as the Python package does.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", safetensors_dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {t.begin, t.end}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw Error(detail::str_cat(path, ": a tensor name or metadata string is not valid UTF-8 (", e.what(),
                                "); use UTF-8 strings"));
  }
  // Padding keeps the data section, and so every tensor, 8-byte aligned in a mapped file.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace hwaro::serialize
