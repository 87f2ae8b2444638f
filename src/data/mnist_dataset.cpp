// MnistDataset: the four IDX files of MNIST / Fashion-MNIST.
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "hwaro/data/readers.h"
#include "hwaro/ops.h"

namespace hwaro::data {

std::string default_data_dir() {
  if (const char* dir = std::getenv("HWARO_DATA_DIR"); dir != nullptr && *dir != '\0') return dir;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/hwaro/data";
}

namespace {
// Whether `path` exists; a failure other than its absence (a directory without search permission, a
// symbolic-link loop) is an hw::Error naming it, not the std::filesystem::filesystem_error exists() throws.
bool exists(const std::string& path) {
  std::error_code error;
  const bool found = std::filesystem::exists(path, error);
  HWARO_CHECK(!error, "cannot look for MNIST file '", path, "': ", error.message());
  return found;
}

std::string find_file(const std::string& dir, const std::string& name) {
  const std::string raw = dir + "/" + name;
  if (exists(raw)) return raw;
  if (exists(raw + ".gz")) return raw + ".gz";
  throw Error(detail::str_cat("MNIST file not found: '", raw, "' (or '", raw,
                              ".gz'); run scripts/fetch-data.sh to download and convert MNIST and Fashion-MNIST into ",
                              default_data_dir(), " (HWARO_DATA_DIR overrides it), or pass the directory holding them"));
}
}  // namespace

MnistDataset::MnistDataset(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string images_path = find_file(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_file(dir, prefix + "-labels-idx1-ubyte");
  images_ = read_idx(images_path);
  const Tensor labels = read_idx(labels_path);
  HWARO_CHECK(images_.dtype() == kUInt8 && images_.dim() == 3, "'", images_path,
              "': expected unsigned-byte images of shape [N, H, W], but found ", images_.dtype(), " ", images_.sizes());
  HWARO_CHECK(labels.dtype() == kUInt8 && labels.dim() == 1, "'", labels_path,
              "': expected unsigned-byte labels of shape [N], but found ", labels.dtype(), " ", labels.sizes());
  HWARO_CHECK(labels.size(0) == images_.size(0), "'", images_path, "' holds ", images_.size(0), " images but '",
              labels_path, "' holds ", labels.size(0), " labels; they must match");
  const std::uint8_t* l = labels.data_ptr<std::uint8_t>();
  for (std::int64_t i = 0; i < labels.size(0); ++i) {
    HWARO_CHECK(l[i] <= 9, "'", labels_path, "': label ", i, " is ", int{l[i]}, " but MNIST classes are 0..9");
  }
  labels_ = labels.to(kInt64);
}

std::size_t MnistDataset::size() const { return static_cast<std::size_t>(images_.size(0)); }

Example MnistDataset::get(std::size_t index) const {
  check_index(index, size(), "MnistDataset");
  const auto i = static_cast<std::int64_t>(index);
  Tensor image = images_.select(0, i).to(kFloat32).unsqueeze(0).div(255.0);
  return {image, labels_.select(0, i).clone()};
}

}  // namespace hwaro::data
