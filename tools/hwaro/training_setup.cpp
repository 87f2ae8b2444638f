// Device, data and optimiser for `hwaro train`, from its flags.
#include "training_setup.h"

#include <algorithm>
#include <cmath>

namespace hw = hwaro;

namespace hwaro_cli {

hw::Device resolve_device(const std::string& flag) {
  if (flag == "auto") return hw::default_device();
  if (flag == "cpu") return hw::Device("cpu");
  if (!hw::cuda::is_available()) {
    throw hw::Error("--device " + flag + ": CUDA is not available here (" + hw::cuda::unavailable_reason() +
                    "); use --device cpu, or --device auto to take the GPU when there is one");
  }
  const hw::Device device(flag);
  const int count = hw::cuda::device_count();
  if (device.index() >= count) {
    throw hw::Error("--device " + flag + ": there " + (count == 1 ? "is 1 CUDA device" : "are " +
                    std::to_string(count) + " CUDA devices") + " (cuda:0 to cuda:" + std::to_string(count - 1) +
                    "); `hwaro info` lists them");
  }
  return device;
}

namespace {

// Mean and standard deviation of the pixels of (up to) the first 10000 training images: enough for
// normalisation to three digits, and the same for a data set hwaro has never seen.
std::pair<double, double> pixel_mean_std(const hw::data::Dataset& train) {
  const std::size_t count = std::min<std::size_t>(train.size(), 10000);
  double sum = 0, sum_squares = 0, n = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const hw::Tensor x = train.get(i).data.to(hw::kFloat64);
    sum += x.sum().item<double>();
    sum_squares += (x * x).sum().item<double>();
    n += static_cast<double>(x.numel());
  }
  const double mean = sum / n;
  return {mean, std::sqrt(std::max(sum_squares / n - mean * mean, 1e-12))};
}

}  // namespace

TrainingData load_training_data(const std::string& flag) {
  TrainingData data;
  if (flag == "fashion-mnist" || flag == "mnist") {
    data.name = flag == "mnist" ? "MNIST" : "Fashion-MNIST";
    data.dir = hw::data::default_data_dir() + "/" + flag;
  } else {
    data.name = flag;
    data.dir = flag;
  }
  auto train = std::make_shared<hw::data::MnistDataset>(data.dir, /*train=*/true);
  auto test = std::make_shared<hw::data::MnistDataset>(data.dir, /*train=*/false);
  HWARO_CHECK(train->size() > 0, "'", data.dir, "': the training set holds no images, so there is nothing to train on");
  std::tie(data.mean, data.std) = pixel_mean_std(*train);
  const std::vector<std::shared_ptr<hw::data::Transform>> normalise{
      std::make_shared<hw::data::Normalize>(std::vector<double>{data.mean}, std::vector<double>{data.std})};
  data.train = std::make_shared<hw::data::TransformedDataset>(train, normalise);
  data.test = std::make_shared<hw::data::TransformedDataset>(test, normalise);
  return data;
}

std::unique_ptr<hw::optim::Optimizer> make_optimizer(const std::string& flag, std::vector<hw::Tensor> params,
                                                     double lr) {
  if (flag == "sgd") return std::make_unique<hw::optim::SGD>(std::move(params), hw::optim::SGDOptions{.lr = lr, .momentum = 0.9});
  if (flag == "adam") return std::make_unique<hw::optim::Adam>(std::move(params), hw::optim::AdamOptions{.lr = lr});
  if (flag == "adamw") return std::make_unique<hw::optim::AdamW>(std::move(params), hw::optim::AdamWOptions{.lr = lr});
  throw hw::Error("--optimizer " + flag + ": accepted: sgd, adam, adamw");
}

}  // namespace hwaro_cli
