// hw::save_checkpoint / hw::load_checkpoint: model, optimiser, scheduler, counters and the default
// generator in one safetensors file, with prefixes on the tensor names and "hwaro." metadata keys.
#include "hwaro/checkpoint.h"

#include <charconv>
#include <limits>
#include <string_view>

#include "hwaro/errors.h"
#include "hwaro/generator.h"
#include "hwaro/serialize.h"
#include "serialize/header.h"

namespace hwaro {
namespace {

constexpr std::string_view kModel = "model.";
constexpr std::string_view kOptimizer = "optimizer.";
constexpr std::string_view kScheduler = "scheduler.";
constexpr std::string_view kReserved = "hwaro.";
constexpr const char* kFormatKey = "hwaro.checkpoint";
constexpr const char* kFormatVersion = "1";

void add_prefixed(std::map<std::string, Tensor>& out, std::string_view prefix, const nn::StateDict& in) {
  for (const auto& [name, tensor] : in) out.emplace(std::string(prefix) + name, tensor);
}

std::map<std::string, Tensor> take_prefixed(const std::map<std::string, Tensor>& all, std::string_view prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, tensor] : all) {
    if (name.starts_with(prefix)) out.emplace(name.substr(prefix.size()), tensor);
  }
  return out;
}

std::uint64_t parse_counter(const std::map<std::string, std::string>& metadata, const std::string& key,
                            const std::string& path,
                            std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  auto it = metadata.find(key);
  HWARO_CHECK(it != metadata.end(), path, ": checkpoint metadata has no '", key, "'; the file is damaged or was not "
                                          "written by hw::save_checkpoint");
  std::uint64_t value = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  HWARO_CHECK(ec == std::errc() && end == text.data() + text.size(), path, ": checkpoint metadata '", key,
              "' is \"", text, "\", not a non-negative integer");
  HWARO_CHECK(value <= max, path, ": checkpoint metadata '", key, "' is ", value, ", more than ", max);
  return value;
}

CheckpointInfo info_from(const std::map<std::string, std::string>& metadata, const std::string& path) {
  auto format = metadata.find(kFormatKey);
  HWARO_CHECK(format != metadata.end(), path, ": not a hwaro checkpoint (no '", kFormatKey,
              "' metadata); a file from hw::save holds tensors only: load it with hw::load");
  HWARO_CHECK(format->second == kFormatVersion, path, ": checkpoint format version ", format->second,
              " is not supported (this hwaro reads version ", kFormatVersion, ")");
  CheckpointInfo info;
  // Epoch and step are int64 in CheckpointInfo; a larger value would turn negative there.
  constexpr auto kMaxCount = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  info.epoch = static_cast<std::int64_t>(parse_counter(metadata, "hwaro.epoch", path, kMaxCount));
  info.step = static_cast<std::int64_t>(parse_counter(metadata, "hwaro.step", path, kMaxCount));
  for (const auto& [key, value] : metadata) {
    if (!key.starts_with(kReserved)) info.extra.emplace(key, value);
  }
  return info;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer& optimizer,
                     const optim::Scheduler* scheduler, const CheckpointInfo& info) {
  HWARO_CHECK(info.epoch >= 0 && info.step >= 0, "save_checkpoint: epoch and step must be >= 0, got epoch ",
              info.epoch, " and step ", info.step);
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : info.extra) {
    HWARO_CHECK(!key.starts_with(kReserved), "save_checkpoint: metadata key '", key,
                "' starts with \"hwaro.\", which the checkpoint keeps for itself; rename it");
    metadata.emplace(key, value);
  }
  const Generator& generator = default_generator();
  // std::string temporaries, not const char* assignments: GCC 12's -Wrestrict misfires on those at -O3.
  metadata[kFormatKey] = std::string(kFormatVersion);
  metadata["hwaro.epoch"] = std::to_string(info.epoch);
  metadata["hwaro.step"] = std::to_string(info.step);
  metadata["hwaro.generator.seed"] = std::to_string(generator.seed());
  metadata["hwaro.generator.offset"] = std::to_string(generator.offset());
  metadata["hwaro.has_scheduler"] = std::string(scheduler != nullptr ? "1" : "0");

  std::map<std::string, Tensor> tensors;
  add_prefixed(tensors, kModel, model.state_dict());
  add_prefixed(tensors, kOptimizer, optimizer.state_dict());
  if (scheduler != nullptr) add_prefixed(tensors, kScheduler, scheduler->state_dict());
  save(tensors, path, metadata);
}

CheckpointInfo read_checkpoint_info(const std::string& path) { return info_from(load_metadata(path), path); }

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer,
                               optim::Scheduler* scheduler, std::optional<Device> map_location) {
  const serialize::LoadedFile file = serialize::load_file(path, map_location);
  const auto& metadata = file.metadata;
  CheckpointInfo info = info_from(metadata, path);
  const bool has_scheduler = parse_counter(metadata, "hwaro.has_scheduler", path) != 0;
  HWARO_CHECK(scheduler == nullptr || has_scheduler, path, ": the checkpoint has no scheduler state but a scheduler "
                                                            "was passed; pass nullptr or resume without a scheduler");
  const std::uint64_t seed = parse_counter(metadata, "hwaro.generator.seed", path);
  const std::uint64_t offset = parse_counter(metadata, "hwaro.generator.offset", path);

  const auto& tensors = file.tensors;
  // All or nothing: each load_state_dict checks before it changes anything, and the model, which
  // is loaded last, is the one whose refusal must undo the others (from snapshots taken here; the
  // optimiser's load replaces its state tensors, so the snapshot's stay as they were).
  const auto optimizer_before = optimizer.state_dict();
  const auto scheduler_before = scheduler != nullptr ? scheduler->state_dict() : std::map<std::string, Tensor>{};
  const auto restore = [&] {
    if (scheduler != nullptr) {
      // Sets the lr, which the optimiser's restore below puts back. A scheduler that refuses its own
      // state (an LRScheduler made before a group was added) refused the checkpoint's too, so it is
      // unchanged; its refusal must not skip the optimiser's restore.
      try {
        scheduler->load_state_dict(scheduler_before);
      } catch (...) {
      }
    }
    optimizer.load_state_dict(optimizer_before);
  };
  try {
    optimizer.load_state_dict(take_prefixed(tensors, kOptimizer));
    if (scheduler != nullptr) scheduler->load_state_dict(take_prefixed(tensors, kScheduler));
    model.load_state_dict(take_prefixed(tensors, kModel), /*strict=*/true);
  } catch (const Error& e) {
    restore();
    throw Error(path + ": the checkpoint does not fit this model or optimiser: " + e.what());
  } catch (...) {
    // Anything else (a LambdaLR's function that throws, std::bad_alloc) is all or nothing too.
    restore();
    throw;
  }
  Generator& generator = default_generator();
  generator.manual_seed(seed);
  generator.take(offset);
  return info;
}

}  // namespace hwaro
