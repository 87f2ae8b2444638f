// The loop of `hwaro train`. The order of an epoch's samples is a function of (seed, epoch), so a
// run resumed mid-epoch from a checkpoint sees exactly the batches the interrupted run had left.
// With --distributed every rank runs this loop on its DistributedSampler shard through
// DistributedDataParallel; the evaluation is sharded too and its sums all-reduced; rank 0 alone
// prints and writes the checkpoint, metrics and plot.
#include "trainer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>

#include "distributed_training.h"
#include "hwaro/hwaro.h"
#include "interrupt.h"
#include "models.h"
#include "progress.h"
#include "training_metrics.h"
#include "training_setup.h"

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

std::string or_default(const std::string& value, const std::string& dir, const char* file) {
  return value.empty() ? (std::filesystem::path(dir) / file).string() : value;
}

void make_parent_dir(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

std::vector<std::size_t> epoch_order(std::uint64_t seed, int epoch, std::size_t size) {
  std::vector<std::size_t> order(size);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// The settings a checkpoint must share with the flags for a resume to continue the same run.
std::map<std::string, std::string> run_identity(const TrainOptions& o) {
  return {{"model", o.model}, {"optimizer", o.optimizer}, {"batch-size", std::to_string(o.batch_size)},
          {"seed", std::to_string(o.seed)}};
}

void check_resumable(const hw::CheckpointInfo& info, const TrainOptions& options) {
  for (const auto& [flag, value] : run_identity(options)) {
    auto it = info.extra.find(flag);
    if (it == info.extra.end()) {
      throw hw::Error("--resume " + options.resume + ": not a checkpoint of `hwaro train` (no '" + flag + "')");
    }
    if (it->second != value) {
      throw hw::Error("--resume " + options.resume + ": the checkpoint was trained with --" + flag + " " +
                      it->second + ", not " + value + "; pass --" + flag + " " + it->second + " to continue it");
    }
  }
}

double carried_number(const hw::CheckpointInfo& info, const std::string& key, const std::string& path) {
  auto it = info.extra.find(key);
  char* end = nullptr;
  const double value = it == info.extra.end() ? 0.0 : std::strtod(it->second.c_str(), &end);
  if (it == info.extra.end() || end == it->second.c_str() || *end != '\0' || !(value >= 0)) {
    throw hw::Error("--resume " + path + ": the checkpoint's '" + key + "' is missing or not a number");
  }
  return value;
}

struct Evaluation {
  double loss = 0, accuracy = 0;
};

// Over this rank's part of the test set, the sums then added up over the ranks (--distributed).
Evaluation evaluate(hw::nn::Module& model, const std::shared_ptr<hw::data::Dataset>& test, hw::Device device,
                    const hw::data::DataLoaderOptions& loader_options, const DistributedRun& dist) {
  hw::NoGradGuard no_grad;
  model.eval();
  hw::data::DataLoader loader(test, loader_options);
  hw::Tensor loss_sum = hw::zeros({}, {.dtype = hw::kFloat64, .device = device});
  hw::Tensor correct = hw::zeros({}, {.dtype = hw::kInt64, .device = device});
  for (auto& batch : loader) {
    const hw::Tensor x = batch.data.to(device, /*non_blocking=*/true);
    const hw::Tensor y = batch.target.to(device, /*non_blocking=*/true);
    const hw::Tensor logits = model.forward(x);
    loss_sum.add_(hw::nn::functional::cross_entropy(logits, y, {.reduction = hw::nn::functional::Reduction::Sum})
                      .to(hw::kFloat64));
    correct.add_(logits.argmax(1).eq(y).sum(hw::kInt64));
  }
  model.train();
  hw::Tensor totals = hw::zeros({3}, {.dtype = hw::kFloat64});  // loss sum, correct, images
  totals[0].fill_(loss_sum.item<double>());
  totals[1].fill_(static_cast<double>(correct.item<std::int64_t>()));
  totals[2].fill_(static_cast<double>(test->size()));
  sum_over_ranks(totals, dist);
  const double n = totals[2].item<double>();
  return {totals[0].item<double>() / n, totals[1].item<double>() / n};
}

// Every visible GPU when training on CUDA; on the CPU two replicas, each on its own thread, which
// shows the mechanism (scatter, replicas, gather, gradients summed) where there is no second GPU.
std::vector<hw::Device> data_parallel_devices(hw::Device device) {
  std::vector<hw::Device> devices;
  if (device.type() == hw::DeviceType::CUDA) {
    for (int i = 0; i < hw::cuda::device_count(); ++i) devices.emplace_back(hw::DeviceType::CUDA, i);
  } else {
    devices.assign(2, hw::Device("cpu"));
  }
  return devices;
}

std::string describe_device(hw::Device device) {
  if (device.type() == hw::DeviceType::CUDA) {
    return device.str() + " (" + hw::cuda::get_device_name(device.has_index() ? device.index() : 0) + ")";
  }
  return device.str() + " (" + std::to_string(hw::get_num_threads()) + " threads)";
}

}  // namespace

int run_training(const TrainOptions& options, std::ostream& every_rank_out) {
  const DistributedRun dist = options.distributed ? start_distributed(options) : DistributedRun{};
  if (!dist.active && options.threads > 0) hw::set_num_threads(options.threads);
  std::ostream silent(nullptr);  // what ranks other than 0 print to: nothing
  std::ostream& out = dist.rank == 0 ? every_rank_out : silent;
  const bool writes_files = dist.rank == 0;
  // Under --distributed the process group chose the device: the rank's GPU (NCCL) or the CPU (MPI).
  const hw::Device device = dist.active ? dist.device : resolve_device(options.device);
  const TrainingData data = load_training_data(options.data);
  const std::string checkpoint_path = or_default(options.checkpoint, options.out_dir, "checkpoint.safetensors");
  const std::string metrics_path = or_default(options.metrics, options.out_dir, "metrics.jsonl");
  const std::string plot_path = or_default(options.plot, options.out_dir, "training.svg");
  if (writes_files) {
    for (const auto& path : {checkpoint_path, metrics_path, plot_path}) make_parent_dir(path);
  }

  hw::manual_seed(options.seed);  // the initial weights, then dropout
  auto model = make_model(options.model);
  model->to(device);  // in place, before the optimiser takes the parameters (guide §3.2)
  auto optimizer = make_optimizer(options.optimizer, model->parameters(), options.lr);
  // What runs the batches: the model itself, or DataParallel over it (guide §4.1). Checkpoints and
  // the optimiser keep to the model, so a checkpoint loads with or without --data-parallel.
  std::shared_ptr<hw::nn::Module> runner = model;
  if (options.data_parallel) runner = hw::nn::DataParallel(model, data_parallel_devices(device)).ptr();
  if (dist.active) runner = hw::nn::DistributedDataParallel(model).ptr();  // rank 0's weights, broadcast

  int first_epoch = 0;
  std::size_t first_batch = 0;
  std::vector<EpochMetrics> history;
  // The loss and sample count of a partly done epoch travel in the checkpoint, so that the resumed
  // epoch's train loss covers all of its batches.
  double carried_loss_sum = 0;
  std::size_t carried_samples = 0;
  if (!options.resume.empty()) {
    check_resumable(hw::read_checkpoint_info(options.resume), options);
    const auto info = hw::load_checkpoint(options.resume, *model, *optimizer, nullptr, device);
    first_epoch = static_cast<int>(info.epoch);
    first_batch = static_cast<std::size_t>(info.step);
    history = parse_json_lines(info.extra.count("history") ? info.extra.at("history") : "", options.resume);
    if (first_batch > 0 && dist.active) {
      throw hw::Error("--resume " + options.resume + ": the checkpoint stops mid-epoch (batch " +
                      std::to_string(first_batch) + "), which only a run without --distributed can continue; " +
                      "resume it without --distributed, or pass a checkpoint written at the end of an epoch");
    }
    if (first_batch > 0) {
      carried_loss_sum = carried_number(info, "epoch-loss-sum", options.resume);
      carried_samples = static_cast<std::size_t>(carried_number(info, "epoch-samples", options.resume));
    }
    out << "resuming " << options.resume << " at epoch " << first_epoch + 1 << ", batch " << first_batch << "\n";
  }

  const bool pin = options.pin_memory < 0 ? device.type() == hw::DeviceType::CUDA : options.pin_memory == 1;
  const hw::data::DataLoaderOptions loader_options{.batch_size = options.batch_size,
                                                   .num_workers = options.workers,
                                                   .pin_memory = pin};
  // --distributed: this rank's shard, the same size on every rank (padded as PyTorch does).
  std::shared_ptr<hw::data::DistributedSampler> sampler;
  std::shared_ptr<hw::data::Dataset> shard;
  if (dist.active) {
    sampler = std::make_shared<hw::data::DistributedSampler>(
        data.train->size(), dist.world, dist.rank, hw::data::DistributedSamplerOptions{.seed = options.seed});
    shard = std::make_shared<hw::data::DistributedShard>(data.train, sampler);
  }
  const std::size_t rank_samples = dist.active ? shard->size() : data.train->size();
  const std::size_t batches = (rank_samples + options.batch_size - 1) / options.batch_size;
  out << "hwaro train: " << options.model << " on " << data.name << " (" << data.train->size() << " training, "
      << data.test->size() << " test images) on " << describe_device(device) << "\n"
      << "  " << options.optimizer << " lr " << options.lr << ", batch " << options.batch_size << ", "
      << options.epochs << " epochs, " << options.workers << " loader workers, pin_memory "
      << (pin ? "on" : "off") << "\n";
  if (dist.active) {
    out << "  DistributedDataParallel over " << dist.world << " ranks ("
        << hw::distributed::default_group().backend() << "), " << dist.threads << " threads each: "
        << "each rank trains on its shard of " << rank_samples << " images (batch " << options.batch_size
        << " per rank); the test set is split over the ranks and its sums all-reduced\n";
  }
  if (options.data_parallel) {
    out << "  DataParallel over";
    for (const auto& d : std::static_pointer_cast<hw::nn::DataParallelImpl>(runner)->devices()) out << " " << d;
    out << "\n";
  }
  out
      << std::flush;

  // Not under --distributed: ranks would see Ctrl-C at different batches and stop mid-collective.
  if (!dist.active) install_interrupt_handler();
  auto save = [&](int epoch, std::size_t step, double loss_sum, std::size_t samples) {
    if (!writes_files) return;
    auto extra = run_identity(options);
    extra["history"] = to_json_lines(history);
    char exact[32];
    std::snprintf(exact, sizeof exact, "%.17g", loss_sum);
    extra["epoch-loss-sum"] = exact;
    extra["epoch-samples"] = std::to_string(samples);
    hw::save_checkpoint(checkpoint_path, *model, *optimizer, nullptr,
                        {.epoch = epoch, .step = static_cast<std::int64_t>(step), .extra = extra});
  };
  const std::string title = "hwaro train: " + options.model + " on " + data.name + ", " + device.str();

  for (int epoch = first_epoch; epoch < options.epochs; ++epoch) {
    std::shared_ptr<hw::data::Dataset> remaining = shard;
    if (dist.active) {
      sampler->set_epoch(static_cast<std::uint64_t>(epoch));
    } else {
      const auto order = epoch_order(options.seed, epoch, data.train->size());
      const std::size_t skip = std::min(first_batch * options.batch_size, order.size());
      remaining = std::make_shared<hw::data::Subset>(
          data.train, std::vector<std::size_t>(order.begin() + static_cast<std::ptrdiff_t>(skip), order.end()));
    }
    hw::data::DataLoader loader(remaining, loader_options);
    EpochProgress progress(progress_style(options.progress), out, epoch + 1, options.epochs, batches, first_batch);

    hw::Timer timer(device);  // synchronises the device, so the epoch time includes the GPU's work
    timer.start();
    hw::Tensor loss_sum = hw::full({}, carried_loss_sum, {.dtype = hw::kFloat64, .device = device});
    std::size_t done = first_batch, samples = carried_samples, samples_now = 0;  // now: since this process began it
    carried_loss_sum = 0;
    carried_samples = 0;
    for (auto& batch : loader) {
      const hw::Tensor x = batch.data.to(device, /*non_blocking=*/true);
      const hw::Tensor y = batch.target.to(device, /*non_blocking=*/true);
      const hw::Tensor loss = hw::nn::functional::cross_entropy(runner->forward(x), y);
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      {
        hw::NoGradGuard no_grad;
        loss_sum.add_(loss.detach().to(hw::kFloat64), static_cast<double>(x.size(0)));
      }
      ++done;
      samples += static_cast<std::size_t>(x.size(0));
      samples_now += static_cast<std::size_t>(x.size(0));
      progress.update(done, samples_now, [&] { return loss_sum.item<double>() / static_cast<double>(samples); });
      if (interrupt_requested() && done < batches) {
        progress.finish();
        save(epoch, done, loss_sum.item<double>(), samples);
        out << "interrupted: checkpoint saved to " << checkpoint_path << " (epoch " << epoch + 1 << ", batch " << done
            << "); continue with: hwaro train --resume " << checkpoint_path << "\n";
        return 130;
      }
    }
    const double seconds = timer.stop() / 1000.0;
    progress.finish();
    // The epoch's loss over every rank's batches, and the images every rank trained on.
    hw::Tensor totals = hw::zeros({3}, {.dtype = hw::kFloat64});
    totals[0].fill_(loss_sum.item<double>());
    totals[1].fill_(static_cast<double>(samples));
    totals[2].fill_(static_cast<double>(samples_now));
    sum_over_ranks(totals, dist);
    const double all_samples = totals[1].item<double>();
    // Under --distributed the model itself: DDP's forward broadcasts buffers, a collective, and the
    // ranks' test shards may differ in size by one batch.
    hw::nn::Module& evaluated = dist.active ? *model : *runner;
    const Evaluation test = evaluate(evaluated, test_shard(data.test, dist), device,
                                     {.batch_size = 1000, .num_workers = options.workers, .pin_memory = pin}, dist);
    EpochMetrics m{.epoch = epoch + 1,
                   .train_loss = all_samples > 0 ? totals[0].item<double>() / all_samples : 0.0,
                   .test_loss = test.loss,
                   .test_accuracy = test.accuracy,
                   .epoch_seconds = seconds,
                   .samples_per_second = totals[2].item<double>() / seconds,
                   .loader_waited_fraction = loader.stats().waited_fraction(),
                   .lr = optimizer->param_groups()[0].lr,
                   .device = device.str()};
    history.push_back(m);
    first_batch = 0;
    save(epoch + 1, 0, 0.0, 0);
    if (writes_files) {
      hw::write_file_atomically(metrics_path, to_json_lines(history));
      hw::write_file_atomically(plot_path, training_plot_svg(history, title));
    }

    std::ostringstream line;
    line << std::fixed << "epoch " << m.epoch << "/" << options.epochs << ": train loss " << std::setprecision(4)
         << m.train_loss << ", test loss " << m.test_loss << ", test accuracy " << std::setprecision(2)
         << 100.0 * m.test_accuracy << "%, " << std::setprecision(1) << seconds << " s ("
         << std::setprecision(0) << m.samples_per_second << " samples/s); loader: " << loader.verdict();
    out << line.str() << "\n" << std::flush;
    if (interrupt_requested()) {
      out << "interrupted: checkpoint saved to " << checkpoint_path << " after epoch " << epoch + 1
          << "; continue with: hwaro train --resume " << checkpoint_path << "\n";
      return 130;
    }
  }
  if (!history.empty()) {
    out << std::fixed << std::setprecision(2) << "final test accuracy " << 100.0 * history.back().test_accuracy
        << "%; metrics: " << metrics_path << ", plot: " << plot_path << ", checkpoint: " << checkpoint_path << "\n";
  }
  if (options.parameter_digest) {
    std::ostringstream line;  // one write per rank, so that the ranks' lines do not interleave
    line << "rank " << dist.rank << " of " << dist.world << ": parameter digest " << parameter_digest(*model) << "\n";
    every_rank_out << line.str() << std::flush;
  }
  if (dist.active) hw::distributed::destroy_process_group();  // every rank got here: MPI ends cleanly
  return 0;
}

}  // namespace hwaro_cli
