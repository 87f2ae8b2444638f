#pragma once
// Readers of real data formats: IDX (MNIST) and CSV of numbers. Every header and size is validated; a truncated or
// corrupt file is an hw::Error that names the file and what is wrong.
#include <cstdint>
#include <string>
#include <vector>

#include "hwaro/data/dataset.h"

namespace hwaro::data {

// An IDX file (the MNIST format: magic 0 0 <type> <ndims>, big-endian dims, big-endian data),
// raw or gzip-compressed. Types: 0x08 ubyte -> uint8, 0x09 sbyte -> int32, 0x0B short -> int32,
// 0x0C int -> int32, 0x0D float -> float32, 0x0E double -> float64.
Tensor read_idx(const std::string& path);

// How CsvDataset reads a file.
struct CsvOptions {
  bool header = false;             // the first row names the columns
  std::int64_t target_column = -1;  // the target's column, from 0; negative counts from the end
  std::string target_name{};       // with a header: the target's column by name (overrides target_column)
  DType target_dtype = kInt64;     // kInt64 (class labels, whole numbers) or kFloat32 (regression)
  char delimiter = ',';
};

// A CSV file of numbers (raw or gzip-compressed): each row is one sample, whose data is the
// float32 vector of every column but the target's, and whose target is that column's value
// (a scalar of target_dtype). Fields may be padded with spaces or wrapped in double quotes;
// blank lines are skipped; "\r\n" line ends are accepted. A ragged row, a field that is not a
// number, a file without data rows, or an unknown target column is an hw::Error that names
// the file, the line and the column.
class CsvDataset : public Dataset {
 public:
  explicit CsvDataset(const std::string& path, CsvOptions options = {});
  std::size_t size() const override;
  Example get(std::size_t index) const override;
  const Tensor& data() const { return data_; }        // float32 [N, features]
  const Tensor& targets() const { return targets_; }  // target_dtype [N]
  // The header's names of the data columns, in order (empty without a header).
  const std::vector<std::string>& feature_names() const { return feature_names_; }

 private:
  Tensor data_;
  Tensor targets_;
  std::vector<std::string> feature_names_;
};

// ${HWARO_DATA_DIR:-$HOME/.cache/hwaro/data}: where scripts/fetch-data.sh puts the data sets.
std::string default_data_dir();

// MNIST or Fashion-MNIST in `dir`: {train,t10k}-{images-idx3,labels-idx1}-ubyte, each raw or .gz.
// A sample is data float32 [1, 28, 28] scaled to [0, 1] and target int64 scalar (0..9).
// Missing files: an hw::Error that says to run scripts/fetch-data.sh.
class MnistDataset : public Dataset {
 public:
  MnistDataset(const std::string& dir, bool train);
  std::size_t size() const override;
  Example get(std::size_t index) const override;

 private:
  Tensor images_;  // uint8 [N, H, W]
  Tensor labels_;  // int64 [N]
};

}  // namespace hwaro::data
