// Guide §4.1: several GPUs in one process. hw::nn::DataParallel splits each batch along dim 0,
// runs one replica of the model per device (each on its own thread), gathers the outputs on the
// first device, and backward sums the gradients into the model's own parameters, so the
// optimiser is built and stepped exactly as without it.
//
// With fewer than two GPUs there is nothing to spread over; the same machinery then runs with
// two CPU replicas (two threads on one device), which is what this machine shows.
#include <hwaro/hwaro.h>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace hw = hwaro;

namespace {

hw::nn::Sequential make_model() {
  return hw::nn::Sequential(hw::nn::Linear(20, 64), hw::nn::ReLU(), hw::nn::Linear(64, 5));
}

}  // namespace

int main() {
  std::vector<hw::Device> devices;
  for (int i = 0; i < hw::cuda::device_count(); ++i) devices.emplace_back(hw::kCUDA, i);
  if (devices.size() < 2) {
    std::cout << "found " << devices.size() << " GPU(s): DataParallel needs two or more to speed anything up "
              << "(with one device it is a transparent wrapper); showing the split over two CPU replicas instead\n";
    devices = {hw::Device("cpu"), hw::Device("cpu")};
  }

  hw::manual_seed(0);
  hw::nn::Sequential model = make_model();
  hw::nn::Sequential plain = make_model();  // the same model without DataParallel, for the check
  plain->load_state_dict(model->state_dict());
  model->to(devices[0]);
  plain->to(devices[0]);

  hw::nn::DataParallel dp(model, devices);  // replicas are built once, here
  std::cout << *dp << "\n";
  hw::optim::SGD opt(dp->parameters(), {.lr = 0.05, .momentum = 0.9});
  hw::optim::SGD plain_opt(plain->parameters(), {.lr = 0.05, .momentum = 0.9});

  const int steps = 5;
  for (int step = 0; step < steps; ++step) {
    const hw::Tensor x = hw::randn({50, 20}).to(devices[0]);  // 50 rows: 25 per replica
    const hw::Tensor labels = hw::randint(0, 5, {50}).to(devices[0]);
    opt.zero_grad();
    hw::Tensor loss = hw::nn::functional::cross_entropy(dp->forward(x), labels);
    loss.backward();
    opt.step();

    plain_opt.zero_grad();
    hw::nn::functional::cross_entropy(plain->forward(x), labels).backward();
    plain_opt.step();
    std::cout << "step " << step << ": loss " << loss.item<float>() << "\n";
  }

  // The check: DataParallel's steps are the plain model's steps, to float32 rounding.
  double max_difference = 0.0;
  const auto got = model->parameters(), want = plain->parameters();
  for (std::size_t i = 0; i < got.size(); ++i) {
    max_difference = std::max(max_difference, (got[i] - want[i]).abs().max().cpu().item<float>() * 1.0);
  }
  if (!(max_difference < 1e-4)) {
    std::cout << "MISMATCH: DataParallel's parameters differ from the plain model's by " << max_difference << "\n";
    return 1;
  }
  std::cout << "DataParallel over " << devices.size() << " replicas: " << steps
            << " steps match the plain model (largest difference " << max_difference << ")\n";
  return 0;
}
