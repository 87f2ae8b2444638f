#include "serialize/dtype_names.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace hwaro::serialize {
namespace {

constexpr std::array<std::pair<DType, const char*>, kNumDTypes> kNames{{
    {DType::Float64, "F64"},
    {DType::Float32, "F32"},
    {DType::Float16, "F16"},
    {DType::BFloat16, "BF16"},
    {DType::Int64, "I64"},
    {DType::Int32, "I32"},
    {DType::UInt8, "U8"},
    {DType::Bool, "BOOL"},
}};

// The rest of safetensors' dtypes: legal in a file, but hwaro has no matching DType.
// As the reference reader's Dtype enum (safetensors' tensor.rs).
constexpr std::array<std::string_view, 14> kOtherSafetensorsNames{
    "I8",       "I16", "U16",     "U32",     "U64",         "F8_E5M2",     "F8_E4M3",
    "F8_E8M0",  "F4",  "F6_E2M3", "F6_E3M2", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64"};

}  // namespace

const char* safetensors_dtype_name(DType dtype) {
  for (const auto& [d, name] : kNames) {
    if (d == dtype) return name;
  }
  return "?";
}

std::optional<DType> dtype_from_safetensors_name(const std::string& name, bool* known_elsewhere) {
  for (const auto& [d, n] : kNames) {
    if (name == n) return d;
  }
  if (known_elsewhere != nullptr) {
    *known_elsewhere = std::find(kOtherSafetensorsNames.begin(), kOtherSafetensorsNames.end(), name) !=
                       kOtherSafetensorsNames.end();
  }
  return std::nullopt;
}

std::string supported_safetensors_dtypes() {
  std::string out;
  for (const auto& [d, name] : kNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace hwaro::serialize
