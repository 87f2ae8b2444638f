#pragma once
// Readers of real data formats. Every header and size is validated; a truncated or
// corrupt file is an hw::Error that names the file and what is wrong.
#include <cstdint>
#include <string>

#include "hwaro/data/dataset.h"

namespace hwaro::data {

// An IDX file (the MNIST format: magic 0 0 <type> <ndims>, big-endian dims, big-endian data),
// raw or gzip-compressed. Types: 0x08 ubyte -> uint8, 0x09 sbyte -> int32, 0x0B short -> int32,
// 0x0C int -> int32, 0x0D float -> float32, 0x0E double -> float64.
Tensor read_idx(const std::string& path);

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
