// Guide Dev Tip 3, "Feed the device": when loading a batch takes longer than the step that
// uses it, the device waits. Worker threads load batches ahead of the loop (num_workers,
// prefetch_factor); pin_memory collates into page-locked memory so that .to(device,
// /*non_blocking=*/true) can copy while the host goes on. The loader measures how long the
// loop waited for data and says whether the loop is input-bound.
//
//   PyTorch:  DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True, prefetch_factor=2)
//             x = x.to(device, non_blocking=True)
#include <hwaro/hwaro.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

namespace hw = hwaro;
namespace F = hw::nn::functional;

namespace {

// A data set whose get() takes a while, like reading and decoding an image from disk.
// get() is called from several worker threads at once, so it touches no shared state.
class SlowImages : public hw::data::Dataset {
 public:
  std::size_t size() const override { return 768; }
  hw::data::Example get(std::size_t index) const override {
    hw::data::check_index(index, size(), "SlowImages");
    std::this_thread::sleep_for(std::chrono::microseconds(400));  // the "disk"
    const auto label = static_cast<std::int64_t>(index % 10);
    return {hw::full({1, 28, 28}, static_cast<double>(label) / 10.0), hw::full({}, label, {.dtype = hw::kInt64})};
  }
};

struct EpochResult {
  double seconds;
  hw::data::LoaderStats stats;
  std::string verdict;
};

// One epoch of training with the given loader options; the model step is the same each time.
EpochResult run_epoch(const hw::data::DataLoaderOptions& options, const hw::Device& device) {
  hw::manual_seed(0);
  auto model = hw::nn::Sequential(hw::nn::Flatten(), hw::nn::Linear(784, 512), hw::nn::ReLU(), hw::nn::Linear(512, 10));
  model->to(device);
  hw::optim::SGD optimizer(model->parameters(), {.lr = 0.01});
  hw::data::DataLoader loader(std::make_shared<SlowImages>(), options);

  const auto start = std::chrono::steady_clock::now();
  for (auto& batch : loader) {
    // From pinned memory the copy is asynchronous; the first op that needs the data waits for it.
    const hw::Tensor inputs = batch.data.to(device, /*non_blocking=*/true);
    const hw::Tensor labels = batch.target.to(device, /*non_blocking=*/true);
    optimizer.zero_grad();
    F::cross_entropy(model->forward(inputs), labels).backward();
    optimizer.step();
  }
  if (device.is_cuda()) hw::cuda::synchronize();  // the epoch ends when the device's work does
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {seconds, loader.stats(), loader.verdict()};
}

void print(const char* label, const EpochResult& r) {
  std::cout << label << ": epoch " << r.seconds << " s, " << r.stats.batches << " batches, "
            << r.stats.load_seconds_per_batch * 1e3 << " ms to load a batch; " << r.verdict << "\n";
}

}  // namespace

int main() {
  const hw::Device device = hw::default_device();
  std::cout << "using device: " << device << "\n";
  const bool pin = device.is_cuda();  // page-locked memory only helps copies to a GPU
  if (!pin) std::cout << "no GPU: pin_memory stays off (there is no copy to speed up)\n";

  // The loop's own thread loads every batch: loading and computing take turns.
  const EpochResult serial = run_epoch({.batch_size = 32, .shuffle = true, .num_workers = 0, .pin_memory = pin}, device);
  print("num_workers=0", serial);

  // Four workers, each with two batches in flight, load while the loop computes.
  const EpochResult parallel = run_epoch(
      {.batch_size = 32, .shuffle = true, .num_workers = 4, .pin_memory = pin, .prefetch_factor = 2}, device);
  print("num_workers=4", parallel);

  // The example's check: the workers made the epoch faster and the loop waited less for data.
  // (On a fast GPU the step is so short that even four workers cannot keep up, so the *fraction*
  // of time waited can rise while the time waited falls; the time is what is checked.)
  const double serial_wait = 100 * serial.stats.waited_fraction();
  const double parallel_wait = 100 * parallel.stats.waited_fraction();
  if (!(parallel.seconds < serial.seconds && parallel.stats.wait_seconds < serial.stats.wait_seconds)) {
    std::cout << "FAILED: 4 workers took " << parallel.seconds << " s (waited " << parallel.stats.wait_seconds << " s, "
              << parallel_wait << "%), none took " << serial.seconds << " s (waited " << serial.stats.wait_seconds << " s, "
              << serial_wait << "%)\n";
    return 1;
  }
  std::cout << "workers helped: epoch " << parallel.seconds << " s instead of " << serial.seconds
            << " s; the loop waited " << parallel_wait << "% of the time instead of " << serial_wait << "%\n";
  return 0;
}
