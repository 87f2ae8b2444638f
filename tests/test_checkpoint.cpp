// hw::save_checkpoint / load_checkpoint: a run stopped and resumed from a checkpoint ends with
// exactly the parameters of the run that never stopped (model, Adam state, scheduler and the
// generator that drives dropout all restored); files that are not checkpoints, or do not fit the
// model, are clear errors naming the file.
#include "hwaro/checkpoint.h"

#include "serialize_test_files.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

using Batches = std::vector<std::pair<Tensor, Tensor>>;

// One step per batch, the scheduler stepped after each (as after an epoch).
void train(nn::Module& model, optim::Optimizer& optimizer, optim::LRScheduler& scheduler, const Batches& batches) {
  for (const auto& [x, y] : batches) {
    optimizer.zero_grad();
    nn::functional::cross_entropy(model.forward(x), y).backward();
    optimizer.step();
    scheduler.step();
  }
}

struct TrainingRun {
  nn::Sequential model;
  optim::Adam optimizer;
  optim::StepLR scheduler;
  explicit TrainingRun(std::uint64_t init_seed)
      : model(make_model(init_seed)), optimizer(model->parameters(), {.lr = 1e-2}), scheduler(optimizer, 2, 0.5) {}

  static nn::Sequential make_model(std::uint64_t init_seed) {
    manual_seed(init_seed);
    return nn::Sequential(nn::Linear(8, 16), nn::ReLU(), nn::Dropout(0.3), nn::Linear(16, 3));
  }
  void train(const Batches& batches) { test::train(*model, optimizer, scheduler, batches); }
};

Batches random_batches(int count, std::mt19937_64& rng) {
  Batches out;
  std::uniform_int_distribution<std::int64_t> label(0, 2);
  for (int i = 0; i < count; ++i) {
    std::vector<std::int64_t> labels(32);
    for (auto& l : labels) l = label(rng);
    out.emplace_back(random_tensor({32, 8}, kFloat32, rng), tensor(labels));
  }
  return out;
}

std::vector<std::vector<double>> parameter_values(const nn::Module& model) {
  std::vector<std::vector<double>> out;
  for (const Tensor& p : model.parameters()) out.push_back(values_of(p));
  return out;
}

TEST(Checkpoint, ResumingEndsWithTheParametersOfTheRunThatNeverStopped) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const auto first = random_batches(3, rng);
  const auto second = random_batches(4, rng);
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");

  TrainingRun straight(seed);
  straight.train(first);
  save_checkpoint(path, *straight.model, straight.optimizer, &straight.scheduler,
                  {.epoch = 3, .step = 7, .extra = {{"model", "tiny"}}});
  straight.train(second);

  TrainingRun resumed(seed + 1);  // other initial weights, and the generator elsewhere
  manual_seed(seed + 2);
  const CheckpointInfo info = load_checkpoint(path, *resumed.model, resumed.optimizer, &resumed.scheduler);
  EXPECT_EQ(info.epoch, 3);
  EXPECT_EQ(info.step, 7);
  EXPECT_EQ(info.extra, (std::map<std::string, std::string>{{"model", "tiny"}}));
  EXPECT_EQ(resumed.scheduler.get_last_lr(), std::vector<double>{1e-2 * 0.5});  // 3 steps of StepLR(2, 0.5)
  resumed.train(second);

  EXPECT_EQ(parameter_values(*resumed.model), parameter_values(*straight.model));
}

// A scheduler made after load_checkpoint (its last_epoch loaded from the file afterwards) takes
// its base lr from the initial_lr saved with the optimiser, not from the saved, already decayed
// lr, so the run ends as the one that never stopped. A file without initial_lr (as hwaro wrote
// them before it saved one) still loads, with the scheduler made before, as it always did.
TEST(Checkpoint, ASchedulerMadeAfterLoadingResumesTheScheduleAndOldFilesStillLoad) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const auto first = random_batches(3, rng);
  const auto second = random_batches(4, rng);
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors"), old_path = dir.file("old.safetensors");

  TrainingRun straight(seed);
  straight.train(first);
  save_checkpoint(path, *straight.model, straight.optimizer, &straight.scheduler, {});
  straight.train(second);
  const auto expected = parameter_values(*straight.model);

  nn::Sequential model = TrainingRun::make_model(seed + 1);
  optim::Adam optimizer(model->parameters(), {.lr = 1e-2});
  load_checkpoint(path, *model, optimizer, nullptr);
  optim::StepLR scheduler(optimizer, 2, 0.5);
  scheduler.load_state_dict({{"last_epoch", load(path).at("scheduler.last_epoch")}});
  EXPECT_EQ(scheduler.get_last_lr(), std::vector<double>{1e-2 * 0.5});  // 3 steps of StepLR(2, 0.5)
  train(*model, optimizer, scheduler, second);
  EXPECT_EQ(parameter_values(*model), expected);

  auto tensors = load(path);
  ASSERT_EQ(tensors.erase("optimizer.param_groups.0.initial_lr"), 1U);
  save(tensors, old_path, load_metadata(path));
  TrainingRun old(seed + 2);
  load_checkpoint(old_path, *old.model, old.optimizer, &old.scheduler);
  old.train(second);
  EXPECT_EQ(parameter_values(*old.model), expected);
}

// The scheduler's base lrs travel in the file ("scheduler.base_lrs.0"), as in PyTorch's state_dict:
// a run resumed with an optimiser made with another lr, its scheduler made before loading, ends as
// the one that never stopped. A file without them (an older hwaro's) still loads.
TEST(Checkpoint, TheSchedulersBaseLrsAreSavedAndRestored) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const auto first = random_batches(3, rng);
  const auto second = random_batches(4, rng);
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors"), old_path = dir.file("old.safetensors");

  TrainingRun straight(seed);
  straight.train(first);
  save_checkpoint(path, *straight.model, straight.optimizer, &straight.scheduler, {});
  straight.train(second);
  EXPECT_EQ(load(path).at("scheduler.base_lrs.0").item<double>(), 1e-2);

  nn::Sequential model = TrainingRun::make_model(seed + 1);
  optim::Adam optimizer(model->parameters(), {.lr = 0.5});
  optim::StepLR scheduler(optimizer, 2, 0.5);
  load_checkpoint(path, *model, optimizer, &scheduler);
  EXPECT_EQ(scheduler.get_last_lr(), std::vector<double>{1e-2 * 0.5});  // 3 steps of StepLR(2, 0.5)
  train(*model, optimizer, scheduler, second);
  EXPECT_EQ(parameter_values(*model), parameter_values(*straight.model));

  auto tensors = load(path);
  ASSERT_EQ(tensors.erase("scheduler.base_lrs.0"), 1U);
  save(tensors, old_path, load_metadata(path));
  TrainingRun old(seed + 2);
  load_checkpoint(old_path, *old.model, old.optimizer, &old.scheduler);
  old.train(second);
  EXPECT_EQ(parameter_values(*old.model), parameter_values(*straight.model));
}

TEST(Checkpoint, ReadInfoNeedsNoModel) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  TrainingRun run(1);
  save_checkpoint(path, *run.model, run.optimizer, nullptr, {.epoch = 2, .extra = {{"optimizer", "adam"}}});
  const CheckpointInfo info = read_checkpoint_info(path);
  EXPECT_EQ(info.epoch, 2);
  EXPECT_EQ(info.step, 0);
  EXPECT_EQ(info.extra.at("optimizer"), "adam");
}

TEST(Checkpoint, APlainTensorFileIsNotACheckpoint) {
  ScratchDir dir;
  const std::string path = dir.file("weights.safetensors");
  TrainingRun run(1);
  save(run.model->state_dict(), path);
  EXPECT_TRUE(throws_with<Error>([&] { read_checkpoint_info(path); }, "not a hwaro checkpoint"));
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *run.model, run.optimizer, nullptr); },
                                 path + ": not a hwaro checkpoint"));
}

TEST(Checkpoint, AModelOfAnotherShapeIsRejectedNamingTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  TrainingRun run(1);
  save_checkpoint(path, *run.model, run.optimizer, nullptr, {});
  nn::Linear other(8, 5);
  optim::SGD sgd(other->parameters());
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *other, sgd, nullptr); },
                                 path + ": the checkpoint does not fit this model"));
}

// The named values of every parameter and of every optimiser state tensor, to compare before and after.
std::map<std::string, std::vector<double>> snapshot(const TrainingRun& run) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, p] : run.model->named_parameters()) out["model." + name] = values_of(p);
  for (const auto& [name, t] : run.optimizer.state_dict()) out["optimizer." + name] = values_of(t);
  out["lr"] = {run.optimizer.param_groups()[0].lr};
  return out;
}

TEST(Checkpoint, ACheckpointThatDoesNotFitChangesNothing) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  TrainingRun saved(seed);
  saved.train(random_batches(3, rng));
  save_checkpoint(path, *saved.model, saved.optimizer, &saved.scheduler, {});

  // The optimiser's state and the scheduler fit `other` (same parameter shapes), but the model's
  // names do not: without the Dropout the second Linear is "2", not "3". The model is loaded last,
  // and its refusal must put back the optimiser and scheduler loaded before it.
  TrainingRun other(seed + 1);
  other.train(random_batches(1, rng));
  const auto before = snapshot(other);
  nn::Sequential renamed(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 3));
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *renamed, other.optimizer, &other.scheduler); },
                                 "the checkpoint does not fit this model"));
  EXPECT_EQ(snapshot(other), before) << "a refused load left the optimiser or scheduler changed";

  // The other way round: the model fits, an optimiser over its first parameter only does not.
  const auto model_before = snapshot(other);
  optim::Adam partial({other.model->parameters()[0]}, {.lr = 1e-2});
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *other.model, partial, nullptr); },
                                 "parameter group 0 has 4 parameters but the optimizer's has 1"));
  EXPECT_EQ(snapshot(other), model_before) << "a refused load left the model changed";
}

TEST(Checkpoint, ASchedulerAskedForButNotSavedIsAnError) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  TrainingRun run(1);
  save_checkpoint(path, *run.model, run.optimizer, nullptr, {});
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *run.model, run.optimizer, &run.scheduler); },
                                 "no scheduler state"));
}

// A scheduler that refuses even its own earlier state (an LRScheduler made before a group was
// added to its optimiser) must not stop the rollback: the optimiser, loaded first, is put back and
// the error names the file.
TEST(Checkpoint, ARefusedSchedulerLoadStillRestoresTheOptimiser) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  TrainingRun saved(1);
  saved.optimizer.add_param_group({zeros({2}).set_requires_grad(true)}, 0.3);
  save_checkpoint(path, *saved.model, saved.optimizer, &saved.scheduler, {});

  TrainingRun run(2);
  run.optimizer.add_param_group({zeros({2}).set_requires_grad(true)}, 0.9);
  EXPECT_TRUE(throws_with<Error>([&] { load_checkpoint(path, *run.model, run.optimizer, &run.scheduler); },
                                 path + ": the checkpoint does not fit"));
  EXPECT_EQ(run.optimizer.param_groups()[0].lr, 1e-2);
  EXPECT_EQ(run.optimizer.param_groups()[1].lr, 0.9);
  EXPECT_EQ(run.scheduler.last_epoch(), 0);
}

// Any exception during the load, not only an hw::Error, rolls the optimiser back: here a LambdaLR
// whose function has no value for the checkpoint's epoch throws std::out_of_range from the
// scheduler's load, after the optimiser had taken the checkpoint's state. It reaches the caller
// as it was thrown.
TEST(Checkpoint, AnyExceptionDuringTheLoadRestoresTheOptimiser) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  std::mt19937_64 rng(fresh_seed());
  const Batches batches = random_batches(8, rng);
  nn::Sequential model = TrainingRun::make_model(1);
  optim::Adam adam(model->parameters(), {.lr = 1e-2});
  optim::LambdaLR decay(adam, [](std::int64_t epoch) { return 1.0 / (1.0 + static_cast<double>(epoch)); });
  train(*model, adam, decay, batches);
  save_checkpoint(path, *model, adam, &decay, {});

  nn::Sequential other = TrainingRun::make_model(2);
  optim::Adam other_adam(other->parameters(), {.lr = 1e-2});
  const std::vector<double> table = {1.0, 0.9, 0.8, 0.7, 0.6, 0.5};
  optim::LambdaLR short_table(other_adam, [table](std::int64_t epoch) { return table.at(epoch); });
  train(*other, other_adam, short_table, {batches[0], batches[1]});
  const auto before = other_adam.state_dict();
  EXPECT_THROW(load_checkpoint(path, *other, other_adam, &short_table), std::out_of_range);
  const auto after = other_adam.state_dict();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [key, t] : before) EXPECT_EQ(values_of(after.at(key)), values_of(t)) << key;
  EXPECT_EQ(short_table.last_epoch(), 2);
}

TEST(Checkpoint, ReservedOrDamagedMetadataIsAnError) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  TrainingRun run(1);
  EXPECT_TRUE(throws_with<Error>(
      [&] { save_checkpoint(path, *run.model, run.optimizer, nullptr, {.extra = {{"hwaro.epoch", "9"}}}); },
      "keeps for itself"));
  save(run.model->state_dict(), path, {{"hwaro.checkpoint", "1"}, {"hwaro.epoch", "three"}, {"hwaro.step", "0"}});
  EXPECT_TRUE(throws_with<Error>([&] { read_checkpoint_info(path); }, "'hwaro.epoch' is \"three\""));
  // A counter past int64 would come back negative (epoch -1 for 2^64 - 1).
  save(run.model->state_dict(), path,
       {{"hwaro.checkpoint", "1"}, {"hwaro.epoch", "18446744073709551615"}, {"hwaro.step", "0"}});
  EXPECT_TRUE(throws_with<Error>([&] { read_checkpoint_info(path); },
                                 "'hwaro.epoch' is 18446744073709551615, more than 9223372036854775807"));
  save(run.model->state_dict(), path, {{"hwaro.checkpoint", "7"}});
  EXPECT_TRUE(throws_with<Error>([&] { read_checkpoint_info(path); }, "format version 7 is not supported"));
}

}  // namespace
}  // namespace hwaro::test
