#pragma once
// Reading a whole file, gzip-compressed or not, for the parsers.
#include <cstdint>
#include <string>
#include <vector>

namespace hwaro::data {

// The file's bytes, decompressed when it is gzip (zlib reads plain files as they are).
// hw::Error naming the file when it cannot be opened or its gzip stream is corrupt or truncated.
std::vector<std::uint8_t> read_file_bytes(const std::string& path);

}  // namespace hwaro::data
