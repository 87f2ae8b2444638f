#pragma once
// Replacing a file so that readers see the old bytes or the new ones, never a mix, even after a crash:
// write a temporary file in the same directory, fsync it, rename it over the target, fsync the directory.
#include <cstddef>
#include <functional>
#include <string>

namespace hwaro::serialize {

// Appends bytes to the temporary file; throws hw::Error on a short or failed write.
class FileWriter {
 public:
  FileWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void write(const void* data, std::size_t size);

 private:
  int fd_;
  std::string path_;  // the target, for messages
};

// Calls `fill` with a writer on "path.tmp-XXXXXX", then publishes it as `path`. If `fill` or any step
// throws, the temporary file is removed and `path` keeps whatever it held before.
void write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill);

}  // namespace hwaro::serialize
