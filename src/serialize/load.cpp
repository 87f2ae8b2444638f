// hw::load and hw::load_metadata: a safetensors file, validated in full before any tensor is built.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hwaro/errors.h"
#include "hwaro/ops.h"
#include "hwaro/serialize.h"
#include "serialize/dtype_names.h"
#include "serialize/header.h"

namespace hwaro {
namespace {

class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: opening a named pipe would otherwise wait for a writer; it is refused below instead.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    HWARO_CHECK(fd_ >= 0, path, ": cannot open it for reading (", std::strerror(errno), ")");
    try {  // the destructor does not run for a constructor that throws, so the descriptor is closed here
      struct stat info {};
      HWARO_CHECK(::fstat(fd_, &info) == 0, path, ": cannot stat it (", std::strerror(errno), ")");
      HWARO_CHECK(S_ISREG(info.st_mode), path, ": is not a regular file; expected a .safetensors file");
      size_ = static_cast<std::uint64_t>(info.st_size);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  std::uint64_t size() const { return size_; }

  void read_at(std::uint64_t offset, void* into, std::uint64_t bytes) const {
    char* p = static_cast<char*>(into);
    while (bytes > 0) {
      const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      HWARO_CHECK(n > 0, path_, ": reading ", bytes, " bytes at offset ", offset, " failed (",
                  n < 0 ? std::strerror(errno) : "the file ended early; was it changed while being read?", ")");
      p += n;
      offset += static_cast<std::uint64_t>(n);
      bytes -= static_cast<std::uint64_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

struct OpenedFile {
  serialize::Header header;
  std::uint64_t data_start = 0;
};

OpenedFile read_header(const ReadOnlyFile& file, const std::string& path) {
  HWARO_CHECK(file.size() >= 8, path, ": is ", file.size(), " bytes long, shorter than the 8-byte header length "
                                      "every safetensors file starts with");
  std::uint64_t length = 0;  // little-endian on disk and on this host
  file.read_at(0, &length, sizeof length);
  HWARO_CHECK(length <= file.size() - 8, path, ": its header length is ", length, " bytes but only ", file.size() - 8,
              " bytes follow; the file is truncated or not safetensors");
  HWARO_CHECK(length <= serialize::kMaxHeaderBytes, path, ": its header length is ", length, " bytes, more than the ",
              serialize::kMaxHeaderBytes, "-byte limit; the file is damaged or not safetensors");
  std::string text(length, '\0');
  file.read_at(8, text.data(), length);
  OpenedFile opened;
  opened.data_start = 8 + length;
  opened.header = serialize::parse_header(text, file.size() - opened.data_start, path);
  return opened;
}

// hwaro's bool is one byte holding 0 or 1; any other byte would be undefined behaviour when read as bool.
void check_bool_bytes(const Tensor& t, const std::string& name, const std::string& path) {
  const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
  for (std::size_t i = 0; i < t.nbytes(); ++i) {
    HWARO_CHECK(bytes[i] <= 1, path, ": tensor '", name, "' of BOOL holds byte ", static_cast<int>(bytes[i]),
                " at element ", i, "; BOOL elements must be 0 or 1. The file is damaged");
  }
}

}  // namespace

namespace serialize {

LoadedFile load_file(const std::string& path, std::optional<Device> map_location) {
  const ReadOnlyFile file(path);
  OpenedFile opened = read_header(file, path);
  LoadedFile out;
  for (const auto& entry : opened.header.tensors) {
    Tensor t = empty(entry.shape, {.dtype = entry.dtype});
    if (t.nbytes() > 0) file.read_at(opened.data_start + entry.begin, t.data_ptr(), t.nbytes());
    if (entry.dtype == kBool) check_bool_bytes(t, entry.name, path);
    out.tensors.emplace(entry.name, map_location ? t.to(*map_location) : t);
  }
  out.metadata = std::move(opened.header.metadata);
  return out;
}

}  // namespace serialize

std::map<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location) {
  return serialize::load_file(path, map_location).tensors;
}

std::map<std::string, std::string> load_metadata(const std::string& path) {
  const ReadOnlyFile file(path);
  return read_header(file, path).header.metadata;
}

}  // namespace hwaro
