// read_idx: the IDX format of MNIST, every header field and size checked.
#include <algorithm>
#include <cstring>

#include "data/file_bytes.h"
#include "hwaro/data/readers.h"
#include "hwaro/ops.h"

namespace hwaro::data {

namespace {
std::uint64_t big_endian(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}
}  // namespace

Tensor read_idx(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  HWARO_CHECK(bytes.size() >= 4, "'", path, "' is not an IDX file: it has ", bytes.size(),
              " bytes, fewer than the 4 of the magic number");
  HWARO_CHECK(bytes[0] == 0 && bytes[1] == 0, "'", path, "' is not an IDX file: its magic number must start with two zero "
              "bytes, but starts with ", int{bytes[0]}, " ", int{bytes[1]});
  const std::uint8_t type = bytes[2];
  const int ndims = bytes[3];
  int element_bytes = 0;
  DType dtype = kUInt8;
  switch (type) {
    case 0x08: element_bytes = 1; dtype = kUInt8; break;
    case 0x09: element_bytes = 1; dtype = kInt32; break;
    case 0x0B: element_bytes = 2; dtype = kInt32; break;
    case 0x0C: element_bytes = 4; dtype = kInt32; break;
    case 0x0D: element_bytes = 4; dtype = kFloat32; break;
    case 0x0E: element_bytes = 8; dtype = kFloat64; break;
    default:
      throw Error(detail::str_cat("'", path, "': unknown IDX element type 0x", std::hex, int{type},
                                  "; expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E"));
  }
  HWARO_CHECK(ndims >= 1, "'", path, "': an IDX file needs at least one dimension, but its header says 0");
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(ndims);
  HWARO_CHECK(bytes.size() >= header, "'", path, "' is truncated: its header declares ", ndims, " dimensions (",
              header, " bytes) but the file has only ", bytes.size(), " bytes");
  std::vector<std::int64_t> sizes;
  for (int d = 0; d < ndims; ++d) {
    sizes.push_back(static_cast<std::int64_t>(big_endian(&bytes[4 + 4 * static_cast<std::size_t>(d)], 4)));
  }
  const std::uint64_t payload = bytes.size() - header;
  // An empty tensor (any dimension 0) has no data, whatever its other dimensions. Otherwise the
  // product is checked as it grows, so that it cannot overflow: it never exceeds the payload.
  const bool is_empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  std::uint64_t count = is_empty ? 0 : 1;
  for (std::size_t d = 0; d < sizes.size() && !is_empty; ++d) {
    count *= static_cast<std::uint64_t>(sizes[d]);
    HWARO_CHECK(count * static_cast<std::uint64_t>(element_bytes) <= payload, "'", path,
                "' is truncated: its header declares dimensions ", IntArrayRef(sizes), ", needing more than the ",
                payload, " data bytes the file holds");
  }
  HWARO_CHECK(count * static_cast<std::uint64_t>(element_bytes) == payload, "'", path, "': its header declares ",
              IntArrayRef(sizes), " elements of ", element_bytes, " bytes (", count * element_bytes,
              " bytes) but the file holds ", payload, " data bytes; it is truncated or corrupt");
  Tensor out;
  try {
    out = empty(sizes, {.dtype = dtype});
  } catch (const Error& e) {  // an empty shape whose strides overflow
    throw Error(detail::str_cat("'", path, "': ", e.what()));
  }
  const std::uint8_t* src = bytes.data() + header;
  if (type == 0x08) {
    if (count > 0) std::memcpy(out.data_ptr(), src, count);  // an empty tensor's data_ptr is null
  } else if (dtype == kInt32) {
    auto* dst = out.data_ptr<std::int32_t>();
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t raw = big_endian(src + i * element_bytes, element_bytes);
      const int shift = 64 - 8 * element_bytes;  // sign-extend from element_bytes
      dst[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(raw << shift) >> shift);
    }
  } else if (dtype == kFloat32) {
    auto* dst = out.data_ptr<float>();
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto raw = static_cast<std::uint32_t>(big_endian(src + i * 4, 4));
      std::memcpy(&dst[i], &raw, 4);
    }
  } else {
    auto* dst = out.data_ptr<double>();
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t raw = big_endian(src + i * 8, 8);
      std::memcpy(&dst[i], &raw, 8);
    }
  }
  return out;
}

}  // namespace hwaro::data
