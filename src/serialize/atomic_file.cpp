#include "serialize/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "hwaro/errors.h"
#include "hwaro/serialize.h"

namespace hwaro::serialize {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Closes the descriptor and removes the temporary file unless the rename already published it.
class TempFile {
 public:
  explicit TempFile(const std::string& target) {
    std::string pattern = target + ".tmp-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    HWARO_CHECK(fd_ >= 0, target, ": cannot create a temporary file next to it (", errno_text(),
                "); check that the directory exists and is writable");
    path_ = name.data();
    // mkstemp creates 0600; a checkpoint should be as readable as any file the user writes.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!published_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  void close_checked(const std::string& target) {
    const int rc = ::close(fd_);
    fd_ = -1;
    HWARO_CHECK(rc == 0, target, ": closing the written file failed (", errno_text(), ")");
  }
  void mark_published() { published_ = true; }

 private:
  int fd_ = -1;
  std::string path_;
  bool published_ = false;
};

}  // namespace

void FileWriter::write(const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    HWARO_CHECK(n > 0, path_, ": writing failed (", n < 0 ? errno_text() : std::string("no progress"),
                "); the previous file, if any, is left unchanged. Check free disk space and file size limits");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill) {
  HWARO_CHECK(!path.empty(), "save: the path is empty; give a file name such as \"model.safetensors\"");
  TempFile temp(path);
  FileWriter writer(temp.fd(), path);
  fill(writer);
  HWARO_CHECK(::fsync(temp.fd()) == 0, path, ": fsync of the written file failed (", errno_text(), ")");
  temp.close_checked(path);
  HWARO_CHECK(::rename(temp.path().c_str(), path.c_str()) == 0, path, ": renaming ", temp.path(),
              " over it failed (", errno_text(), "); the previous file, if any, is left unchanged");
  temp.mark_published();
  // The rename is durable only once the directory entry is on disk.
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    const int rc = ::fsync(dir);
    const int err = errno;
    ::close(dir);
    errno = err;
    HWARO_CHECK(rc == 0, path, ": fsync of its directory failed (", errno_text(), ")");
  }
}

}  // namespace hwaro::serialize

namespace hwaro {

void write_file_atomically(const std::string& path, std::string_view contents) {
  serialize::write_file_atomically(path, [&](serialize::FileWriter& out) { out.write(contents.data(), contents.size()); });
}

}  // namespace hwaro
