// hw::load and hw::load_checkpoint on damaged files: random byte flips and truncations of a valid
// file give hw::Error or a well-formed load, never a crash or another exception. Replay a failure with HWARO_TEST_SEED=<seed>.
#include "hwaro/checkpoint.h"

#include "serialize_test_files.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

TEST(SerializeFuzz, FlipsAndTruncationsGiveAnErrorOrAValidLoad) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string valid_path = dir.file("valid.safetensors");
  save({{"w", random_tensor({3, 4}, kFloat32, rng)}, {"i", random_tensor({5}, kInt64, rng, -9, 9)},
        {"h", random_tensor({2}, kBFloat16, rng)}, {"m", random_tensor({6}, kBool, rng)}},
       valid_path, {{"epoch", "3"}});
  const std::string valid = read_bytes(valid_path);
  const std::size_t data_start = header_end(valid);
  ASSERT_LT(data_start, valid.size());

  const std::string path = dir.file("mutated.safetensors");
  int errors = 0, loads = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Mostly in the length field and header, where a flip changes what the parser sees.
      const std::size_t limit = rng() % 4 != 0 ? data_start : bytes.size();
      bytes[rng() % limit] ^= static_cast<char>(1u << (rng() % 8));
    }
    if (rng() % 3 == 0) bytes.resize(rng() % (bytes.size() + 1));
    write_bytes(path, bytes);
    try {
      const auto loaded = load(path);
      for (const auto& [name, t] : loaded) {
        ASSERT_EQ(t.nbytes(), static_cast<std::size_t>(t.numel()) * element_size(t.dtype())) << name;
        values_of(t);  // every element readable
      }
      ++loads;
    } catch (const Error&) {
      ++errors;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iteration << " threw something other than hw::Error: " << e.what();
    }
  }
  // Both outcomes occur, so the mutations reach past the first check and into the data.
  EXPECT_GT(errors, 0);
  EXPECT_GT(loads, 0);
}

// The same for a training checkpoint, whose tensor names and metadata hwaro parses again (optimiser
// indices, counters): a flipped digit or dot there must be an hw::Error too.
TEST(SerializeFuzz, DamagedCheckpointsGiveAnErrorOrAValidResume) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const auto make_model = [] { return nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)); };
  const std::string valid_path = dir.file("valid.safetensors");
  {
    nn::Sequential model = make_model();
    optim::Adam adam(model->parameters(), {.lr = 0.1});
    optim::StepLR scheduler(adam, 2);
    nn::functional::mse_loss(model->forward(random_tensor({5, 3}, kFloat32, rng)), zeros({5, 2})).backward();
    adam.step();
    scheduler.step();
    save_checkpoint(valid_path, *model, adam, &scheduler, {.epoch = 1, .step = 7});
  }
  const std::string valid = read_bytes(valid_path);
  const std::size_t header_length = header_end(valid) - 8;
  ASSERT_LT(header_end(valid), valid.size());

  const std::string path = dir.file("mutated.safetensors");
  int errors = 0, resumes = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) bytes[8 + rng() % header_length] ^= static_cast<char>(1u << (rng() % 8));
    write_bytes(path, bytes);
    nn::Sequential model = make_model();
    optim::Adam adam(model->parameters(), {.lr = 0.1});
    optim::StepLR scheduler(adam, 2);
    try {
      load_checkpoint(path, *model, adam, &scheduler);
      ++resumes;
    } catch (const Error&) {
      ++errors;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iteration << " threw something other than hw::Error: " << e.what();
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(resumes, 0);
}

}  // namespace
}  // namespace hwaro::test
