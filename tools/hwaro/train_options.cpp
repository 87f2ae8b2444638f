// `hwaro train`'s flags. CLI11 checks each value; the messages name the flag and the accepted values.
#include "train_options.h"

#include <charconv>
#include <cmath>

#include "hwaro/errors.h"
#include "models.h"

namespace hwaro_cli {
namespace {

// "auto", "cpu", "cuda" or "cuda:N"; whether device N exists is checked when training starts.
std::string check_device_flag(const std::string& value) {
  if (value == "auto" || value == "cpu" || value == "cuda") return {};
  if (value.starts_with("cuda:") && value.size() > 5 &&
      value.find_first_not_of("0123456789", 5) == std::string::npos) {
    return {};
  }
  return "'" + value + "' is not a device; accepted: auto, cpu, cuda, cuda:N (N = 0, 1, ...)";
}

// A whole decimal number in 0..2^64-1. CLI11 converts with strtoull, which wraps "-1" round and
// caps what overflows without a word, so two different --seed values would make the same run.
std::string check_seed_flag(const std::string& value) {
  std::uint64_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error == std::errc() && end == value.data() + value.size()) return {};
  return "'" + value + "' is not a seed; accepted: a whole number from 0 to 18446744073709551615";
}

// A finite number above zero; CLI11's PositiveNumber lets "nan" through.
std::string check_learning_rate_flag(const std::string& value) {
  double parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error == std::errc() && end == value.data() + value.size() && std::isfinite(parsed) && parsed > 0) return {};
  return "'" + value + "' is not a learning rate; accepted: a finite number above 0, such as 0.001";
}

}  // namespace

void add_train_flags(CLI::App& command, TrainOptions& options) {
  command.add_option("--model", options.model, "the model")
      ->check(CLI::IsMember(model_names()))
      ->capture_default_str();
  command.add_option("--data", options.data,
                     "fashion-mnist, mnist (as fetched by scripts/fetch-data.sh) or a directory of IDX files")
      ->capture_default_str();
  command.add_option("--device", options.device, "auto (CUDA if available, else CPU), cpu, cuda or cuda:N")
      ->check(CLI::Validator(check_device_flag, "DEVICE", "device"))
      ->capture_default_str();
  command.add_option("--epochs", options.epochs, "passes over the training set")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command.add_option("--batch-size", options.batch_size, "samples per step")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  command.add_option("--lr", options.lr, "learning rate")
      ->check(CLI::Validator(check_learning_rate_flag, "LR", "learning rate"))
      ->capture_default_str();
  command.add_option("--optimizer", options.optimizer, "sgd (momentum 0.9), adam or adamw")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}))
      ->capture_default_str();
  command.add_option("--workers", options.workers, "DataLoader worker threads (0: load in the training thread)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  command.add_flag_function(
      "--pin-memory,!--no-pin-memory", [&options](std::int64_t count) { options.pin_memory = count > 0 ? 1 : 0; },
      "collate batches into page-locked memory (default: on when training on a GPU)");
  command.add_option("--seed", options.seed, "seed of the initial weights, the shuffle and dropout")
      ->check(CLI::Validator(check_seed_flag, "SEED", "seed"))
      ->capture_default_str();
  command.add_option("--out", options.out_dir, "directory for the checkpoint, metrics and plot")->capture_default_str();
  command.add_option("--checkpoint", options.checkpoint,
                     "checkpoint written after each epoch and on Ctrl-C (default: <out>/checkpoint.safetensors)");
  command.add_option("--metrics", options.metrics, "metrics, one JSON object per epoch (default: <out>/metrics.jsonl)");
  command.add_option("--plot", options.plot, "loss and accuracy plot, SVG (default: <out>/training.svg)");
  command.add_option("--resume", options.resume, "continue from this checkpoint")->check(CLI::ExistingFile);
  command.add_option("--threads", options.threads, "CPU threads for the ops (0: one per CPU this process may use)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  auto* data_parallel = command.add_flag(
      "--data-parallel", options.data_parallel,
      "split each batch over every GPU with hw::nn::DataParallel (on the CPU: over two replicas)");
  command
      .add_flag("--distributed", options.distributed,
                "under `mpirun -np N`: one rank per process, DistributedDataParallel over NCCL on a GPU or MPI on the CPU, each rank "
                "training on its shard with --batch-size samples per step and --threads / N threads; rank 0 "
                "prints and writes the files; Ctrl-C ends the job without a checkpoint")
      ->excludes(data_parallel);
  command.add_flag("--parameter-digest", options.parameter_digest,
                   "at the end every rank prints a digest of its parameters (equal digests: bitwise equal)");
  command.add_option("--progress", options.progress,
                     "auto (a bar on a terminal, plain lines otherwise), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
}

}  // namespace hwaro_cli
