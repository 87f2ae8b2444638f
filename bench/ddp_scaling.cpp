// DistributedDataParallel over MPI: how the MLP's training step (784-256-128-10, SGD, batch 128
// per rank) scales from 1 to N ranks on one machine, and how much of the gradient all-reduce
// backward hides. Run under mpirun by scripts/bench-ddp.sh (1 rank, then 2); rank 0 prints one
// line. Not a Google Benchmark program: every rank must run the same steps in lock step.
//
// Three medians over the timed steps, each timed from a barrier to a barrier after it, so that
// every row includes waiting for the slowest rank (which DDP's step does by its nature):
//   plain  the step on the bare module: no communication at all;
//   ddp    the same step through DistributedDataParallel (buckets all-reduced during backward);
//   comm   the all-reduces alone: one blocking Avg all-reduce per bucket, of the buckets' sizes.
// overlap = (plain + comm - ddp) / comm, clamped to [0, 1]: the share of the communication time
// that backward hid (1 = all of it, 0 = none: ddp = plain + comm).
// The bucket cap is small (0.1 MB) so that the MLP's 0.9 MB of gradients make two buckets (the
// last three layers, then the first layer's 0.8 MB weight); with PyTorch's 25 MB they would be
// one bucket, sent after backward ends, with nothing to overlap. One rank has nothing to send.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hwaro/hwaro.h"

namespace hw = hwaro;
namespace nn = hw::nn;

namespace {

constexpr std::int64_t kBatch = 128;
constexpr int kWarmup = 5;
constexpr int kSteps = 40;
constexpr double kBucketCapMb = 0.1;

// "mlp": hwaro train's MLP, whose largest gradient (the first layer's) comes last in backward,
// so most of its bytes cannot overlap anything. "wide" (784-1024-1024-64-10): its 4 MB middle
// weight is ready while the first layer's backward (its largest GEMM) still has to run.
std::shared_ptr<nn::Module> make_model(const std::string& name) {
  if (name == "wide") {
    return nn::Sequential(nn::Flatten(), nn::Linear(28 * 28, 1024), nn::ReLU(), nn::Linear(1024, 1024), nn::ReLU(),
                          nn::Linear(1024, 64), nn::ReLU(), nn::Linear(64, 10))
        .ptr();
  }
  return nn::Sequential(nn::Flatten(), nn::Linear(28 * 28, 256), nn::ReLU(), nn::Linear(256, 128), nn::ReLU(),
                        nn::Linear(128, 10))
      .ptr();
}

template <typename F> double median_ms(F&& step) {
  for (int i = 0; i < kWarmup; ++i) step();
  std::vector<double> ms;
  for (int i = 0; i < kSteps; ++i) {
    hw::distributed::barrier();
    const auto start = std::chrono::steady_clock::now();
    step();
    hw::distributed::barrier();  // every row waits for the slowest rank, as DDP's step does
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + kSteps / 2, ms.end());
  return ms[kSteps / 2];
}

}  // namespace

int main() {
  try {
    hw::distributed::init_process_group("mpi");
    const int world = hw::distributed::get_world_size();
    const int rank = hw::distributed::get_rank();
    const int cores = hw::get_num_threads();
    hw::set_num_threads(std::max(1, cores / world));  // the ranks share the machine's cores
    hw::manual_seed(1234 + static_cast<std::uint64_t>(rank));
    const hw::Tensor x = hw::randn({kBatch, 1, 28, 28});
    const hw::Tensor y = hw::randint(0, 10, {kBatch});

    auto train_step = [&](const std::shared_ptr<nn::Module>& model, hw::optim::SGD& opt) {
      opt.zero_grad();
      hw::nn::functional::cross_entropy(model->forward(x), y).backward();
      opt.step();
    };

    for (const std::string model_name : {"mlp", "wide"}) {
    const std::shared_ptr<nn::Module> plain = make_model(model_name);
    hw::optim::SGD plain_opt(plain->parameters(), {.lr = 0.01});
    const double plain_ms = median_ms([&] { train_step(plain, plain_opt); });

    auto ddp = nn::DistributedDataParallel(make_model(model_name), {.bucket_cap_mb = kBucketCapMb});
    hw::optim::SGD ddp_opt(ddp->parameters(), {.lr = 0.01});
    const std::shared_ptr<nn::Module> ddp_module = ddp.ptr();
    const double ddp_ms = median_ms([&] { train_step(ddp_module, ddp_opt); });

    // One buffer per bucket with as many elements as its gradients: bucket_sizes() counts
    // parameters, taken in reverse registration order (all of the MLP's require grad).
    std::vector<hw::Tensor> params = ddp->module()->parameters();
    std::reverse(params.begin(), params.end());
    std::vector<hw::Tensor> buckets;
    std::size_t next = 0;
    for (std::size_t count : ddp->bucket_sizes()) {
      std::int64_t elements = 0;
      for (std::size_t i = 0; i < count; ++i) elements += params[next++].numel();
      buckets.push_back(hw::randn({elements}));
    }
    const double comm_ms = median_ms([&] {
      for (hw::Tensor& b : buckets) hw::distributed::all_reduce(b, hw::distributed::ReduceOp::Avg);
    });

    if (rank == 0) {
      char overlap[32] = "n/a";
      if (world > 1 && comm_ms > 0) {
        const double hidden = std::clamp((plain_ms + comm_ms - ddp_ms) / comm_ms, 0.0, 1.0);
        std::snprintf(overlap, sizeof overlap, "%.0f%%", 100.0 * hidden);
      }
      std::printf(
          "%s: ranks %d, threads per rank %d, batch %lld per rank, %zu buckets: step plain %.2f ms, ddp %.2f ms, "
          "all-reduce alone %.2f ms, overlap %s, %.0f samples/s in all\n",
          model_name.c_str(), world, hw::get_num_threads(), static_cast<long long>(kBatch), buckets.size(), plain_ms,
          ddp_ms, comm_ms, overlap, world * kBatch / (ddp_ms / 1000.0));
    }
    }
    hw::distributed::destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp_scaling: %s\n", e.what());
    return 1;
  }
}
