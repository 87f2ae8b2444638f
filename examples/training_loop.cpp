// Guide §3.2, "The training loop": one loop that runs on whatever device is there. The model
// is moved once (->to(device), in place); every batch is moved as it arrives (.to(device),
// which returns a new tensor); the loss is read back with .item(), which synchronises.
//
//   PyTorch:  model.to(device); for x, y in loader: x, y = x.to(device), y.to(device); ...
//
// Data: Fashion-MNIST from hw::data::default_data_dir() when scripts/fetch-data.sh has put it
// there (a 6000-image slice, so the example stays quick), else a synthetic stand-in of the
// same shape: 10 random faint "prototype" images, each sample one of them under strong noise.
#include <hwaro/hwaro.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <vector>

namespace hw = hwaro;
namespace F = hw::nn::functional;

namespace {

constexpr std::size_t kTrainSamples = 6000;
constexpr std::size_t kTestSamples = 1000;

// Images [N, 1, 28, 28] float32 and labels [N] int64 in 0..9, learnable but not trivially.
std::shared_ptr<hw::data::Dataset> synthetic(std::size_t n, const hw::Tensor& prototypes) {
  const hw::Tensor labels = hw::randint(0, 10, {static_cast<std::int64_t>(n)});
  const hw::Tensor images = prototypes.index_select(0, labels) + hw::randn({static_cast<std::int64_t>(n), 1, 28, 28});
  return std::make_shared<hw::data::TensorDataset>(images, labels);
}

std::shared_ptr<hw::data::Dataset> first(std::shared_ptr<hw::data::Dataset> data, std::size_t n) {
  std::vector<std::size_t> indices(std::min(n, data->size()));
  std::iota(indices.begin(), indices.end(), std::size_t{0});
  return std::make_shared<hw::data::Subset>(std::move(data), std::move(indices));
}

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to), 0.0) /
         static_cast<double>(to - from);
}

}  // namespace

int main() {
  hw::manual_seed(0);
  const hw::Device device = hw::default_device();  // cuda if available, else cpu
  std::cout << "using device: " << device << "\n";

  std::shared_ptr<hw::data::Dataset> train_set, test_set;
  try {
    const std::string dir = hw::data::default_data_dir() + "/fashion-mnist";
    train_set = first(std::make_shared<hw::data::MnistDataset>(dir, /*train=*/true), kTrainSamples);
    test_set = first(std::make_shared<hw::data::MnistDataset>(dir, /*train=*/false), kTestSamples);
    std::cout << "data: Fashion-MNIST from " << dir << " (the first " << train_set->size() << " training and "
              << test_set->size() << " test images)\n";
  } catch (const hw::Error& e) {
    std::cout << "data: synthetic, because Fashion-MNIST is not here (" << e.what() << ")\n";
    const hw::Tensor prototypes = 0.12 * hw::randn({10, 1, 28, 28});
    train_set = synthetic(kTrainSamples, prototypes);
    test_set = synthetic(kTestSamples, prototypes);
  }
  hw::data::DataLoader train_loader(train_set, {.batch_size = 64, .shuffle = true, .num_workers = 1,
                                                .pin_memory = device.is_cuda()});
  hw::data::DataLoader test_loader(test_set, {.batch_size = 500});

  // The model is built on the CPU and moved once; the optimiser may be made before or after.
  auto model = hw::nn::Sequential(hw::nn::Flatten(), hw::nn::Linear(784, 128), hw::nn::ReLU(), hw::nn::Linear(128, 10));
  model->to(device);
  hw::optim::SGD optimizer(model->parameters(), {.lr = 0.05, .momentum = 0.9});

  std::vector<double> losses;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    model->train();
    for (auto& batch : train_loader) {
      // Every batch goes to the model's device; non_blocking overlaps the copy from pinned memory.
      const hw::Tensor inputs = batch.data.to(device, /*non_blocking=*/true);
      const hw::Tensor labels = batch.target.to(device, /*non_blocking=*/true);
      optimizer.zero_grad();
      hw::Tensor loss = F::cross_entropy(model->forward(inputs), labels);
      loss.backward();
      optimizer.step();
      losses.push_back(loss.item<float>());  // .item() waits for the GPU: fine once per batch
    }
    const std::size_t n = train_loader.size();
    std::cout << "epoch " << epoch << ": mean training loss " << mean(losses, losses.size() - n, losses.size()) << "\n";
  }

  // Evaluation: no graph, eval mode, the same .to(device) for every batch.
  model->eval();
  std::int64_t correct = 0, seen = 0;
  {
    hw::NoGradGuard no_grad;
    for (auto& batch : test_loader) {
      const hw::Tensor predicted = model->forward(batch.data.to(device)).argmax(1);
      correct += (predicted == batch.target.to(device)).sum().item<std::int64_t>();
      seen += batch.target.size(0);
    }
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(seen);
  std::cout << "test accuracy: " << 100 * accuracy << "% of " << seen << "\n";

  // The example's own check: the loss of the last 20 batches is well below that of the first 20.
  const double before = mean(losses, 0, 20), after = mean(losses, losses.size() - 20, losses.size());
  if (!(after < 0.7 * before) || !std::isfinite(after)) {
    std::cout << "FAILED: the loss did not fall (first 20 batches " << before << ", last 20 " << after << ")\n";
    return 1;
  }
  std::cout << "loss fell from " << before << " to " << after << " (mean of the first and last 20 batches)\n";
  return 0;
}
