#include "serialize/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// Where the bytes go: a symbolic link is written through, as open() would, not replaced by a file;
// a dangling one gets its target made. The links are followed here, one at a time, because
// std::filesystem::weakly_canonical leaves a dangling link unresolved.
std::string resolved_target(const std::string& path) {
  constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS, past which open() fails with ELOOP
  std::filesystem::path target = path;
  std::error_code error;
  for (int links = 0; links < kMaxLinks && std::filesystem::is_symlink(target, error); ++links) {
    const std::filesystem::path next = std::filesystem::read_symlink(target, error);
    if (error) return path;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target.string();
}

// The process's umask, read without changing it (umask() sets it process-wide, racing other
// threads' file creation); Linux reports it in /proc/self/status. 022 where that is unreadable.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) != 0) continue;
    const std::size_t digits = line.find_first_not_of(" \t", 6);
    unsigned mask = 0;
    if (digits == std::string::npos) break;
    const std::from_chars_result parsed = std::from_chars(line.data() + digits, line.data() + line.size(), mask, 8);
    if (parsed.ec == std::errc()) return static_cast<mode_t>(mask & 0777);
    break;
  }
  return 022;
}

// The new file gets the permissions of the file it replaces, or those of a newly created file.
mode_t mode_for(const std::string& target) {
  struct stat info {};
  if (::stat(target.c_str(), &info) == 0) return info.st_mode & 07777;
  return 0666 & ~current_umask();
}

// "<target>.tmp-XXXXXX", with the file name cut short where the suffix would pass the 255-byte limit.
std::string temp_pattern(const std::string& target) {
  constexpr std::size_t kMaxNameBytes = 255, kSuffixBytes = 11;  // ".tmp-XXXXXX"
  const auto slash = target.find_last_of('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t name_bytes = std::min(target.size() - name_start, kMaxNameBytes - kSuffixBytes);
  return target.substr(0, name_start + name_bytes) + ".tmp-XXXXXX";
}

// Closes the descriptor and removes the temporary file unless the rename already published it.
class TempFile {
 public:
  explicit TempFile(const std::string& target) {
    const std::string pattern = temp_pattern(target);
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    HWARO_CHECK(fd_ >= 0, target, ": cannot create a temporary file next to it (", errno_text(),
                "); check that the directory exists and is writable");
    path_ = name.data();
    // mkstemp creates 0600; the published file keeps the old file's permissions, or gets a new file's.
    ::fchmod(fd_, mode_for(target));
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
  const std::string target = resolved_target(path);
  TempFile temp(target);
  FileWriter writer(temp.fd(), path);
  fill(writer);
  HWARO_CHECK(::fsync(temp.fd()) == 0, path, ": fsync of the written file failed (", errno_text(), ")");
  temp.close_checked(path);
  HWARO_CHECK(::rename(temp.path().c_str(), target.c_str()) == 0, path, ": renaming ", temp.path(),
              " over it failed (", errno_text(), "); the previous file, if any, is left unchanged");
  temp.mark_published();
  // The rename is durable only once the directory entry is on disk. A directory that cannot be
  // opened for reading (write and search permission only) cannot be fsynced; the file is written.
  const int dir = ::open(directory_of(target).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    const int rc = ::fsync(dir);
    const int err = errno;
    ::close(dir);
    errno = err;
    HWARO_CHECK(rc == 0, path, ": the new file is in place, but fsync of its directory failed (", errno_text(),
                "), so the replacement may not survive a power loss");
  }
}

}  // namespace hwaro::serialize

namespace hwaro {

void write_file_atomically(const std::string& path, std::string_view contents) {
  serialize::write_file_atomically(path, [&](serialize::FileWriter& out) { out.write(contents.data(), contents.size()); });
}

}  // namespace hwaro
