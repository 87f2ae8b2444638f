// hw::distributed's MPI backend, run by ctest under `mpirun -np 2`: every collective against
// results each rank computes by hand in float64 from every rank's inputs (all ranks draw all
// inputs from one seed that rank 0 broadcasts), for several sizes and dtypes; async handles;
// argument errors; and a rank that is late past the timeout is a DistributedError, not a hang.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "hwaro/distributed.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace dist = hwaro::distributed;

std::uint64_t shared_seed() {
  Tensor seed = full({1}, 0, {.dtype = kInt64});
  if (dist::get_rank() == 0) seed.fill_(static_cast<std::int64_t>(fresh_seed() & 0x7fffffffffffULL));
  dist::broadcast(seed, 0);
  return static_cast<std::uint64_t>(seed.item<std::int64_t>());
}

// Rank r's input number k: the same on every rank.
Tensor input_of(std::uint64_t seed, int rank, int k, std::int64_t n, DType dtype) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(rank) * 101 + static_cast<std::uint64_t>(k));
  return is_floating_point(dtype) ? random_tensor({n}, dtype, rng, -4.0, 4.0) : random_tensor({n}, dtype, rng, -50, 50);
}

double tolerance(DType dtype) { return dtype == kFloat16 ? 2e-2 : dtype == kBFloat16 ? 6e-2 : dtype == kFloat32 ? 1e-5 : 0.0; }

const std::vector<std::int64_t> kSizes = {1, 7, 1000, 100003};
const std::vector<DType> kDTypes = {kFloat32, kFloat64, kInt32, kInt64, kFloat16, kBFloat16};

TEST(MpiCollectives, RankAndWorldSize) {
  EXPECT_EQ(dist::get_world_size(), 2);
  EXPECT_GE(dist::get_rank(), 0);
  EXPECT_LT(dist::get_rank(), 2);
  EXPECT_EQ(dist::get_local_rank(), dist::get_rank());  // one machine
  EXPECT_EQ(dist::default_group().backend(), "mpi");
}

TEST(MpiCollectives, AllReduceSumsEveryDTypeAndSize) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(seed);
  const int world = dist::get_world_size(), rank = dist::get_rank();
  for (DType dtype : kDTypes) {
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(::testing::Message() << dtype << " x " << n);
      Tensor t = input_of(seed, rank, 0, n, dtype);
      std::vector<double> expected(static_cast<std::size_t>(n), 0.0);
      for (int r = 0; r < world; ++r) {
        const std::vector<double> v = values_of(input_of(seed, r, 0, n, dtype));
        for (std::size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
      }
      dist::all_reduce(t, dist::ReduceOp::Sum);
      EXPECT_TRUE(all_close(values_of(t), expected, tolerance(dtype), tolerance(dtype)));
    }
  }
}

TEST(MpiCollectives, AllReduceAvgMaxMin) {
  const std::uint64_t seed = shared_seed();
  const int world = dist::get_world_size(), rank = dist::get_rank();
  const std::int64_t n = 513;
  for (dist::ReduceOp op : {dist::ReduceOp::Avg, dist::ReduceOp::Max, dist::ReduceOp::Min}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      Tensor t = input_of(seed, rank, 1, n, dtype);
      std::vector<double> expected = values_of(input_of(seed, 0, 1, n, dtype));
      if (op == dist::ReduceOp::Avg) for (double& e : expected) e /= world;
      for (int r = 1; r < world; ++r) {
        const std::vector<double> v = values_of(input_of(seed, r, 1, n, dtype));
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (op == dist::ReduceOp::Avg) expected[i] += v[i] / world;
          if (op == dist::ReduceOp::Max) expected[i] = std::max(expected[i], v[i]);
          if (op == dist::ReduceOp::Min) expected[i] = std::min(expected[i], v[i]);
        }
      }
      dist::all_reduce(t, op);
      EXPECT_TRUE(all_close(values_of(t), expected, 1e-6, 1e-6));
    }
  }
  Tensor ints = full({3}, 1, {.dtype = kInt64});
  EXPECT_TRUE(throws_with<Error>([&] { dist::all_reduce(ints, dist::ReduceOp::Avg); }, "ReduceOp::Avg needs a floating"));
}

TEST(MpiCollectives, BroadcastFromEachRank) {
  const std::uint64_t seed = shared_seed();
  const int world = dist::get_world_size(), rank = dist::get_rank();
  for (int src = 0; src < world; ++src) {
    for (DType dtype : kDTypes) {
      for (std::int64_t n : kSizes) {
        Tensor t = input_of(seed, rank, 2, n, dtype);
        dist::broadcast(t, src);
        EXPECT_EQ(values_of(t), values_of(input_of(seed, src, 2, n, dtype)));
      }
    }
  }
  Tensor t = zeros({2});
  EXPECT_TRUE(throws_with<Error>([&] { dist::broadcast(t, world); }, "src must be a rank in [0, 2)"));
}

TEST(MpiCollectives, AllGatherCollectsEveryRanksInput) {
  const std::uint64_t seed = shared_seed();
  const int world = dist::get_world_size(), rank = dist::get_rank();
  for (DType dtype : kDTypes) {
    for (std::int64_t n : kSizes) {
      const Tensor input = input_of(seed, rank, 3, n, dtype).reshape({1, n});
      std::vector<Tensor> outputs;
      for (int r = 0; r < world; ++r) outputs.push_back(empty({1, n}, {.dtype = dtype}));
      dist::all_gather(outputs, input);
      for (int r = 0; r < world; ++r) EXPECT_EQ(values_of(outputs[static_cast<std::size_t>(r)]), values_of(input_of(seed, r, 3, n, dtype)));
    }
  }
}

TEST(MpiCollectives, ReduceScatterGivesEachRankItsSum) {
  const std::uint64_t seed = shared_seed();
  const int world = dist::get_world_size(), rank = dist::get_rank();
  for (DType dtype : {kFloat32, kFloat64, kInt32, kInt64, kBFloat16}) {
    for (std::int64_t n : kSizes) {
      std::vector<Tensor> inputs;
      for (int k = 0; k < world; ++k) inputs.push_back(input_of(seed, rank, 10 + k, n, dtype));
      Tensor output = empty({n}, {.dtype = dtype});
      std::vector<double> expected(static_cast<std::size_t>(n), 0.0);
      for (int r = 0; r < world; ++r) {
        const std::vector<double> v = values_of(input_of(seed, r, 10 + rank, n, dtype));
        for (std::size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
      }
      dist::reduce_scatter(output, inputs);
      EXPECT_TRUE(all_close(values_of(output), expected, tolerance(dtype), tolerance(dtype)));
    }
  }
}

TEST(MpiCollectives, AsyncHandlesCompleteInAnyWaitOrder) {
  const std::uint64_t seed = shared_seed();
  const int world = dist::get_world_size(), rank = dist::get_rank();
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<dist::Work>> works;
  for (int k = 0; k < 8; ++k) {
    tensors.push_back(input_of(seed, rank, 20 + k, 4096, kFloat32));
    works.push_back(dist::all_reduce(tensors.back(), dist::ReduceOp::Sum, /*async_op=*/true));
  }
  works.push_back(dist::barrier(/*async_op=*/true));
  for (auto it = works.rbegin(); it != works.rend(); ++it) (*it)->wait();
  for (int k = 0; k < 8; ++k) {
    EXPECT_TRUE(works[static_cast<std::size_t>(k)]->is_completed());
    std::vector<double> expected(4096, 0.0);
    for (int r = 0; r < world; ++r) {
      const std::vector<double> v = values_of(input_of(seed, r, 20 + k, 4096, kFloat32));
      for (std::size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
    }
    EXPECT_TRUE(all_close(values_of(tensors[static_cast<std::size_t>(k)]), expected, 1e-5, 1e-5));
  }
}

TEST(MpiCollectives, WrongArgumentsAreClearErrors) {
  const int world = dist::get_world_size();
  EXPECT_TRUE(throws_with<Error>([] { dist::all_reduce(zeros({4, 4}).t()); }, "must be contiguous"));
  EXPECT_TRUE(throws_with<Error>([] { dist::all_reduce(zeros({2}, {.dtype = kBool})); }, "cannot reduce bool"));
  std::vector<Tensor> too_few(static_cast<std::size_t>(world - 1), zeros({3}));
  EXPECT_TRUE(throws_with<Error>([&] { dist::all_gather(too_few, zeros({3})); }, "one tensor per rank (2)"));
  std::vector<Tensor> wrong_shape(static_cast<std::size_t>(world), zeros({4}));
  EXPECT_TRUE(throws_with<Error>([&] { dist::reduce_scatter(zeros({3}), wrong_shape); }, "inputs[0] must have the shape"));
  EXPECT_TRUE(throws_with<Error>([] { dist::init_process_group("mpi"); }, "already initialised"));
  dist::barrier();
}

TEST(MpiCollectives, TorchrunVariablesThatContradictTheGroupAreRefused) {
  // torchrun's WORLD_SIZE and RANK are not how hwaro's ranks meet (mpirun is): a process started
  // with them but without mpirun would be a group of one and train alone. Where they are set, they
  // must agree with the group, on every rank.
  const int rank = dist::get_rank();
  dist::destroy_process_group();
  ::setenv("WORLD_SIZE", "4", 1);
  EXPECT_TRUE(throws_with<Error>([] { dist::init_process_group("mpi", std::chrono::seconds(60)); },
                                 "WORLD_SIZE=4 in the environment"));
  EXPECT_FALSE(dist::is_initialized());
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", std::to_string(1 - rank).c_str(), 1);
  EXPECT_TRUE(throws_with<Error>([] { dist::init_process_group("mpi", std::chrono::seconds(60)); },
                                 "RANK=" + std::to_string(1 - rank) + " in the environment"));
  ::setenv("RANK", std::to_string(rank).c_str(), 1);
  dist::init_process_group("mpi", std::chrono::seconds(60));  // variables that agree are accepted
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("RANK");
  EXPECT_EQ(dist::get_rank(), rank);
  dist::barrier();
}

// Runs last (gtest keeps the order of definition): rank 1 joins 3 s late, past rank 0's 2 s timeout.
TEST(MpiCollectivesTimeout, ALateRankIsAnErrorNotAHang) {
  dist::destroy_process_group();
  dist::init_process_group("mpi", std::chrono::milliseconds(2000));
  Tensor t = full({16}, 1.0);
  if (dist::get_rank() == 0) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(throws_with<dist::DistributedError>([&] { dist::all_reduce(t); },
                                                    "all_reduce (Sum, 16 float32 elements) did not complete within "
                                                    "2000 ms on rank 0 of 2"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    dist::all_reduce(t);  // completes rank 0's abandoned all_reduce too
    EXPECT_EQ(values_of(t), std::vector<double>(16, 2.0));
  }
  // destroy waits for rank 0's abandoned collective, which rank 1 has joined by now.
  dist::destroy_process_group();
  dist::init_process_group("mpi", std::chrono::seconds(60));
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
