// LibTorch's side of the CNN comparison (issue 4): the training step of bench/bench_conv.cpp's
// BM_cnn_train_step_cpu (conv 1->32, ReLU, pool, conv 32->64, ReLU, pool, linear; cross entropy;
// SGD with momentum 0.9) written with LibTorch's C++ API, so both libraries run the same work on
// the same machine. Built on its own (LibTorch is not a dependency of hwaro): see
// scripts/bench-cnn-vs-libtorch.sh. Prints the median step time of `repeats` timed runs.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::atoi(argv[1]) : 64;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const double seconds_per_repeat = argc > 3 ? std::atof(argv[3]) : 2.0;
  const int repeats = 5;
  torch::set_num_threads(threads);
  torch::manual_seed(0);

  torch::nn::Sequential model(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3).padding(1)), torch::nn::ReLU(),
      torch::nn::MaxPool2d(2), torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1)), torch::nn::ReLU(),
      torch::nn::MaxPool2d(2), torch::nn::Flatten(), torch::nn::Linear(64 * 7 * 7, 10));
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const torch::Tensor x = torch::randn({batch, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {batch});

  const auto step = [&] {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 20; ++i) step();  // warm-up: oneDNN's primitive cache, the allocator

  using Clock = std::chrono::steady_clock;
  std::vector<double> ms_per_step;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    int steps = 0;
    double elapsed = 0;
    while (elapsed < seconds_per_repeat) {
      step();
      ++steps;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    ms_per_step.push_back(1e3 * elapsed / steps);
  }
  std::sort(ms_per_step.begin(), ms_per_step.end());
  const double median = ms_per_step[ms_per_step.size() / 2];
  std::printf("libtorch %s, %d threads, batch %d: step %.2f ms (runs %.2f-%.2f), %.0f samples/s\n",
              TORCH_VERSION, threads, batch, median, ms_per_step.front(), ms_per_step.back(), 1e3 * batch / median);
  return 0;
}
