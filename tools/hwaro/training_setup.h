#pragma once
// What `hwaro train` needs before its loop: the device a flag names, the data set a flag names,
// and the optimiser a flag names. Each bad value is an hw::Error that names the flag.
#include <memory>
#include <string>

#include "hwaro/hwaro.h"

namespace hwaro_cli {

// "auto" is the guide's pattern: CUDA if available, else CPU. "cuda" without CUDA, or a device
// index past the last GPU, is an error saying what is there.
hwaro::Device resolve_device(const std::string& flag);

struct TrainingData {
  std::string name;  // "Fashion-MNIST", "MNIST" or the directory
  std::string dir;
  std::shared_ptr<hwaro::data::Dataset> train, test;  // normalised with the training set's mean and std
  double mean = 0, std = 1;
};

// "fashion-mnist" and "mnist" are the directories scripts/fetch-data.sh fills under
// hw::data::default_data_dir(); anything else is a directory of the same IDX files.
TrainingData load_training_data(const std::string& flag);

std::unique_ptr<hwaro::optim::Optimizer> make_optimizer(const std::string& flag, std::vector<hwaro::Tensor> params,
                                                        double lr);

}  // namespace hwaro_cli
