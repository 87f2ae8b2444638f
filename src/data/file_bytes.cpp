// read_file_bytes through zlib's gz* interface, which passes plain files through.
#include "data/file_bytes.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hwaro/errors.h"

namespace hwaro::data {

std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  // Before gzopen: it would block on a named pipe and report a directory as a corrupt file.
  struct stat info {};
  HWARO_CHECK(::stat(path.c_str(), &info) == 0, "cannot open '", path, "': ", std::strerror(errno));
  HWARO_CHECK(S_ISREG(info.st_mode), "cannot read '", path, "': it is not a regular file");
  gzFile file = gzopen(path.c_str(), "rb");
  HWARO_CHECK(file != nullptr, "cannot open '", path, "': ", std::strerror(errno));
  std::vector<std::uint8_t> bytes;
  // Chunks grow with the data read so far: small files stay cheap, big ones take few calls.
  unsigned chunk = 1 << 16;
  while (true) {
    const std::size_t old_size = bytes.size();
    bytes.resize(old_size + chunk);
    const int got = gzread(file, bytes.data() + old_size, chunk);
    chunk = std::min(chunk * 2, 1u << 26);
    if (got < 0) {
      int code = 0;
      const std::string message = gzerror(file, &code);
      gzclose(file);
      throw Error(detail::str_cat("'", path, "' is corrupt: its gzip stream fails to decompress (", message,
                                  "); delete it and fetch it again"));
    }
    bytes.resize(old_size + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  int code = 0;
  const std::string message = gzerror(file, &code);
  gzclose(file);
  // A gzip stream cut short ends in Z_BUF_ERROR rather than a read error.
  HWARO_CHECK(code == Z_OK || code == Z_STREAM_END, "'", path, "' is truncated or corrupt: its gzip stream ends early (",
              message, "); delete it and fetch it again");
  return bytes;
}

}  // namespace hwaro::data
