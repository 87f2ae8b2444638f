#pragma once
// Training checkpoints: everything needed to stop a run and continue it as if it had not stopped,
// in one safetensors file written atomically.
//
//   hw::save_checkpoint("ckpt.safetensors", *model, opt, &sched, {.epoch = 3, .step = 1407});
//   auto info = hw::load_checkpoint("ckpt.safetensors", *model, opt, &sched, dev);
//   for (int epoch = info.epoch; epoch < epochs; ++epoch) ...
//
// The file holds the model's state_dict ("model.<name>"), the optimiser's ("optimizer.<key>"), the
// scheduler's if any ("scheduler.<key>"), and as metadata the counters, the default generator's seed
// and offset (so dropout and random init continue the same stream) and the caller's own strings.
// It is an ordinary safetensors file: Python's safetensors package reads it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "hwaro/device.h"
#include "hwaro/nn/module.h"
#include "hwaro/optim.h"
#include "hwaro/optim/lr_scheduler.h"

namespace hwaro {

struct CheckpointInfo {
  std::int64_t epoch = 0;  // epochs completed
  std::int64_t step = 0;   // batches completed in the epoch now running (0 at an epoch boundary)
  // The caller's own metadata (model name, hyper-parameters, metric history...). Keys must not
  // start with "hwaro.", which the checkpoint keeps for itself.
  std::map<std::string, std::string> extra{};
};

// The scheduler is any optim::Scheduler: an LRScheduler (StepLR, OneCycleLR...) or ReduceLROnPlateau,
// which is not closed-form and so is not an LRScheduler; nullptr for none.
void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer& optimizer,
                     const optim::Scheduler* scheduler, const CheckpointInfo& info);

// Restores model, optimiser, scheduler (when given; the file must then hold one) and the default
// generator, and returns the counters and extra metadata. Tensors are read to the CPU (or to
// `map_location`), then copied to the devices of the model's parameters and the optimiser's state
// tensors follow their parameters, so a checkpoint saved on the GPU resumes a model on the CPU and
// the other way round. A file that is not a hwaro checkpoint, or whose model does not match `model`
// (strict load_state_dict) or optimiser `optimizer`, is an hw::Error naming the file, and then
// model, optimiser and scheduler are left as they were.
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer,
                               optim::Scheduler* scheduler, std::optional<Device> map_location = {});

// Just the counters and metadata, without loading any tensor (to choose a model before loading).
CheckpointInfo read_checkpoint_info(const std::string& path);

}  // namespace hwaro
