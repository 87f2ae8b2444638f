// hw::nn::DistributedDataParallel under `mpirun -np 2`: DDP over 2 ranks with batch 64 each
// ends 5 SGD steps with the parameters of one float64 process trained on batch 128 (with one
// bucket and with many), every rank ends with the same parameters, no_sync() accumulates
// locally and the next backward averages the sum, and a parameter left without a gradient is
// a clear error.
#include "hwaro/distributed.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace dist = hwaro::distributed;
namespace nn = hwaro::nn;

std::uint64_t shared_seed() {
  Tensor seed = full({1}, 0, {.dtype = kInt64});
  if (dist::get_rank() == 0) seed.fill_(static_cast<std::int64_t>(fresh_seed() & 0x7fffffffffffULL));
  dist::broadcast(seed, 0);
  return static_cast<std::uint64_t>(seed.item<std::int64_t>());
}

nn::Sequential make_mlp() { return nn::Sequential(nn::Linear(8, 16), nn::Tanh(), nn::Linear(16, 4)); }

std::shared_ptr<nn::Module> float64_copy(const nn::Module& module) {
  std::shared_ptr<nn::Module> copy = module.clone_module();
  copy->load_state_dict(module.state_dict());
  copy->to(kFloat64);
  return copy;
}

// Every rank's values of t, as rank 0 sees them.
std::vector<std::vector<double>> gathered(const Tensor& t) {
  std::vector<Tensor> outputs;
  for (int r = 0; r < dist::get_world_size(); ++r) outputs.push_back(empty_like(t));
  dist::all_gather(outputs, t.contiguous());
  std::vector<std::vector<double>> out;
  for (const Tensor& o : outputs) out.push_back(values_of(o));
  return out;
}

void train_and_compare(double bucket_cap_mb) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(seed);
  const int rank = dist::get_rank(), world = dist::get_world_size();
  ASSERT_EQ(world, 2);
  manual_seed(seed + static_cast<std::uint64_t>(rank));  // each rank starts different: DDP broadcasts rank 0's
  nn::Sequential mlp = make_mlp();
  nn::DistributedDataParallel ddp(mlp, {.bucket_cap_mb = bucket_cap_mb});
  if (bucket_cap_mb < 0.01) {
    EXPECT_GT(ddp->bucket_sizes().size(), 1u);
  } else {
    EXPECT_EQ(ddp->bucket_sizes(), (std::vector<std::size_t>{4}));
  }
  for (const Tensor& p : mlp->parameters()) {
    const auto all = gathered(p);
    EXPECT_EQ(all[0], all[1]);
  }
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  optim::SGD opt(ddp->parameters(), {.lr = 0.1, .momentum = 0.9});
  optim::SGD ref_opt(reference->parameters(), {.lr = 0.1, .momentum = 0.9});
  std::mt19937_64 rng(seed);  // the same data on every rank; each takes its 64 rows
  for (int step = 0; step < 5; ++step) {
    const Tensor x = random_tensor({128, 8}, kFloat32, rng);
    const Tensor y = random_tensor({128}, kInt64, rng, 0, 3);
    opt.zero_grad();
    nn::functional::cross_entropy(ddp->forward(x.narrow(0, 64 * rank, 64)), y.narrow(0, 64 * rank, 64)).backward();
    opt.step();
    ref_opt.zero_grad();
    nn::functional::cross_entropy(reference->forward(x.to(kFloat64)), y).backward();
    ref_opt.step();
  }
  const auto got = mlp->named_parameters(), want = reference->named_parameters();
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].first);
    EXPECT_TRUE(all_close(values_of(got[i].second), values_of(want[i].second), 1e-4, 1e-5));
    const auto all = gathered(got[i].second);
    EXPECT_EQ(all[0], all[1]);  // bitwise: every rank applied the same averaged gradients
  }
}

TEST(DistributedDataParallel, TwoRanksOfBatch64EqualOneProcessOfBatch128) { train_and_compare(25.0); }

TEST(DistributedDataParallel, ManySmallBucketsGiveTheSameResult) { train_and_compare(0.0001); }  // 104 bytes: two buckets

TEST(DistributedDataParallel, NoSyncAccumulatesAndTheNextBackwardAverages) {
  const std::uint64_t seed = shared_seed();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  nn::Sequential mlp = make_mlp();
  nn::DistributedDataParallel ddp(mlp);
  const std::shared_ptr<nn::Module> reference = float64_copy(*mlp);
  std::mt19937_64 rng(seed);
  const Tensor x = random_tensor({4 * 16, 8}, kFloat32, rng);  // micro-batch m of rank r: rows (2r + m) * 16
  const Tensor y = random_tensor({4 * 16}, kInt64, rng, 0, 3);
  auto rows = [](const Tensor& t, int r, int m) { return t.narrow(0, (2 * r + m) * 16, 16); };
  {
    auto guard = ddp->no_sync();
    nn::functional::cross_entropy(ddp->forward(rows(x, rank, 0)), rows(y, rank, 0)).backward();
  }
  nn::functional::cross_entropy(ddp->forward(rows(x, rank, 1)), rows(y, rank, 1)).backward();

  Tensor total = zeros({}, {.dtype = kFloat64});
  for (int r = 0; r < world; ++r) {
    for (int m = 0; m < 2; ++m) {
      total = total + nn::functional::cross_entropy(reference->forward(rows(x, r, m).to(kFloat64)), rows(y, r, m));
    }
  }
  (total / world).backward();
  const auto got = mlp->named_parameters(), want = reference->named_parameters();
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].first);
    EXPECT_TRUE(all_close(values_of(got[i].second.grad()), values_of(want[i].second.grad()), 1e-4, 1e-5));
  }
}

struct HalfUsedImpl : nn::Module {
  HalfUsedImpl() {
    used = register_module("used", nn::Linear(3, 3));
    unused = register_module("unused", nn::Linear(3, 3));
  }
  Tensor forward(const Tensor& x) override { return used->forward(x); }
  nn::Linear used{nullptr}, unused{nullptr};
};
HWARO_MODULE(HalfUsed);

TEST(DistributedDataParallel, AParameterWithoutGradientIsAClearError) {
  HalfUsed model;
  nn::DistributedDataParallel ddp(model);
  ddp->forward(ones({2, 3})).sum().backward();
  EXPECT_TRUE(throws_with<Error>([&] { ddp->forward(ones({2, 3})); },
                                 "gave no gradient to unused.bias, unused.weight"));
  // The advice names what works: freezing after wrapping does not take a parameter out of the
  // buckets, freezing before does.
  HalfUsed frozen_late;
  nn::DistributedDataParallel late(frozen_late);
  for (Tensor p : frozen_late->unused->parameters()) p.requires_grad_(false);
  late->forward(ones({2, 3})).sum().backward();
  EXPECT_TRUE(throws_with<Error>(
      [&] {
        late->forward(ones({2, 3}));
      },
      "frozen with requires_grad_(false) before wrapping it"));
  HalfUsed frozen_early;
  for (Tensor p : frozen_early->unused->parameters()) p.requires_grad_(false);
  nn::DistributedDataParallel early(frozen_early);
  for (int step = 0; step < 2; ++step) early->forward(ones({2, 3})).sum().backward();
  dist::barrier();
}

TEST(DistributedDataParallel, AModelThatDiffersAcrossRanksIsAClearErrorOnEveryRank) {
  // Rank 1's model has other shapes, then more parameters: rank 0's values cannot be broadcast
  // into it, and every rank must say so (none may go on to wait for the others).
  const int rank = dist::get_rank();
  nn::Sequential wider(nn::Linear(8, rank == 0 ? 16 : 17), nn::Tanh(), nn::Linear(rank == 0 ? 16 : 17, 4));
  nn::Sequential deeper = make_mlp();
  if (rank == 1) deeper->push_back(nn::Linear(4, 4));
  for (const nn::Sequential& model : {wider, deeper}) {
    EXPECT_TRUE(throws_with<Error>([&] { nn::DistributedDataParallel ddp(model); },
                                   "the wrapped module differs across ranks"));
    dist::barrier();
  }
}

}  // namespace
}  // namespace hwaro::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  hwaro::distributed::init_process_group("mpi", std::chrono::seconds(60));
  const int result = RUN_ALL_TESTS();
  hwaro::distributed::destroy_process_group();
  return result;
}
