#pragma once
// safetensors' dtype names ("F32", "BF16", "BOOL", ...) and hwaro's DType.
#include <optional>
#include <string>

#include "hwaro/dtype.h"

namespace hwaro::serialize {

const char* safetensors_dtype_name(DType dtype);

// nullopt when the name is not one hwaro stores; `known_elsewhere` tells a valid safetensors dtype that
// hwaro lacks (I8, U16, F8_E4M3, ...) from a name that is not safetensors at all.
std::optional<DType> dtype_from_safetensors_name(const std::string& name, bool* known_elsewhere = nullptr);

// "F64, F32, F16, BF16, I64, I32, U8, BOOL", for messages.
std::string supported_safetensors_dtypes();

}  // namespace hwaro::serialize
