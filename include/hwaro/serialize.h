#pragma once
// Checkpoints as safetensors files, the format the Python `safetensors` package reads and writes:
//   8 bytes   little-endian u64 N, the header's length
//   N bytes   UTF-8 JSON {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//             "__metadata__": {"key": "value"}}, padded with spaces to a multiple of 8
//   the rest  every tensor's bytes, little-endian, row-major, at [begin, end) of this section
// dtypes: F64 F32 F16 BF16 I64 I32 U8 BOOL. Files with other dtypes (I8, I16, U16, ...) are refused.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "hwaro/device.h"
#include "hwaro/nn/state_dict.h"
#include "hwaro/tensor.h"

namespace hwaro {

// save() takes an hw::nn::StateDict, which a std::map<std::string, Tensor> converts to; load() returns a
// std::map, ordered by name, which load_state_dict takes. So hw::save(model->state_dict(), path) and
// model->load_state_dict(hw::load(path)) need no conversion.

// Writes `tensors` (copied to the CPU and made contiguous; their devices and strides are not kept) and
// `metadata` to `path`, atomically: the data goes to a temporary file in the same directory, is fsynced and
// renamed over `path`. If anything fails, hw::Error is thrown and a previous file at `path` is untouched.
void save(const nn::StateDict& tensors, const std::string& path, const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of `path`, checking the whole header against the file first (hw::Error naming the file
// and the problem). Tensors are created on the CPU, then moved to `map_location` when given.
std::map<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location = {});

// The "__metadata__" strings of `path` (empty when it has none), after the same checks as load().
std::map<std::string, std::string> load_metadata(const std::string& path);

// Replaces `path` with `contents` atomically (temporary file in the same directory, fsync, rename):
// readers see the old file or the new one, never a mix. For metrics, plots and other text outputs.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace hwaro
