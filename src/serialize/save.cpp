// hw::save: tensors to a safetensors file, written atomically.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "hwaro/errors.h"
#include "hwaro/serialize.h"
#include "serialize/atomic_file.h"
#include "serialize/header.h"

namespace hwaro {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; hwaro writes it raw");

void save(const nn::StateDict& tensors, const std::string& path, const std::map<std::string, std::string>& metadata) {
  struct Pending {
    serialize::TensorEntry entry;
    Tensor data;  // CPU, contiguous
  };
  std::vector<Pending> pending;
  for (const auto& [name, tensor] : tensors) {
    HWARO_CHECK(name != "__metadata__", path, ": a tensor may not be named \"__metadata__\" (safetensors keeps that key "
                                              "for the metadata strings); rename it");
    HWARO_CHECK(tensor.defined(), path, ": tensor '", name, "' is undefined (a default-constructed Tensor); "
                                        "nothing was written. Give it a value or leave it out");
    Tensor data = tensor.cpu().contiguous();
    serialize::TensorEntry entry{name, data.dtype(), std::vector<std::int64_t>(data.sizes().begin(), data.sizes().end())};
    pending.push_back({std::move(entry), std::move(data)});
  }
  // Widest elements first, as the Python package lays files out, so every tensor is aligned to its element;
  // then by name, so the bytes do not depend on the order the tensors were given in.
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    const auto wa = element_size(a.entry.dtype), wb = element_size(b.entry.dtype);
    return wa != wb ? wa > wb : a.entry.name < b.entry.name;
  });
  std::uint64_t offset = 0;
  std::vector<serialize::TensorEntry> entries;
  for (auto& p : pending) {
    p.entry.begin = offset;
    offset += p.data.nbytes();
    p.entry.end = offset;
    entries.push_back(p.entry);
  }
  const std::string header = serialize::build_header(entries, metadata, path);
  // A file that no reader would open (hwaro's load included) is refused before anything is written.
  HWARO_CHECK(header.size() <= serialize::kMaxHeaderBytes, path, ": the header (names, shapes and metadata) would be ",
              header.size(), " bytes, more than the ", serialize::kMaxHeaderBytes,
              " bytes safetensors readers accept; nothing was written. Shorten the metadata or the tensor names");

  serialize::write_file_atomically(path, [&](serialize::FileWriter& out) {
    const std::uint64_t length = header.size();  // little-endian on this host (asserted above)
    out.write(&length, sizeof length);
    out.write(header.data(), header.size());
    for (const auto& p : pending) {
      if (p.data.nbytes() > 0) out.write(p.data.data_ptr(), p.data.nbytes());
    }
  });
}

}  // namespace hwaro
