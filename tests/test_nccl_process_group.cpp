// hw::distributed's NCCL backend in a group of one (world size 1, no mpirun): every collective
// on the GPU against the float64 answer for one rank (the sum, average, max and min of one input
// is the input), async handles, and a tensor on the CPU refused. Runs where there is a GPU
// (scripts/gpu-check.sh); elsewhere init_process_group("nccl") must be a clear error instead.
#include "hwaro/cuda.h"
#include "hwaro/distributed.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

namespace dist = hwaro::distributed;

TEST(NcclProcessGroup, WithoutAGpuItIsAClearError) {
  if (cuda::is_available()) GTEST_SKIP() << "a GPU is present; WorldOfOneOnTheGpu covers this machine";
  // "built without NCCL" in a CPU build, "no usable CUDA device" in a CUDA build on this machine.
  EXPECT_TRUE(throws_with<Error>([] { dist::init_process_group("nccl"); }, "init_process_group(\"nccl\")"));
  EXPECT_FALSE(dist::is_initialized());
}

TEST(NcclProcessGroup, WorldOfOneOnTheGpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no GPU: " << cuda::unavailable_reason();
  dist::init_process_group("nccl", std::chrono::seconds(60));
  EXPECT_EQ(dist::default_group().backend(), "nccl");
  EXPECT_EQ(dist::get_world_size(), 1);
  EXPECT_EQ(dist::get_rank(), 0);
  const Device gpu("cuda:0");
  std::mt19937_64 rng(fresh_seed());
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kInt64}) {
    for (std::int64_t n : {1, 1000, 100003}) {
      SCOPED_TRACE(::testing::Message() << dtype << " x " << n);
      const Tensor host = is_floating_point(dtype) ? random_tensor({n}, dtype, rng) : random_tensor({n}, dtype, rng, -50, 50);
      const std::vector<double> want = values_of(host);
      for (dist::ReduceOp op : {dist::ReduceOp::Sum, dist::ReduceOp::Max, dist::ReduceOp::Min}) {
        Tensor t = host.to(gpu);
        dist::all_reduce(t, op);
        EXPECT_EQ(values_of(t.to(Device("cpu"))), want);
      }
      Tensor b = host.to(gpu);
      dist::broadcast(b, 0);
      EXPECT_EQ(values_of(b.to(Device("cpu"))), want);
      std::vector<Tensor> gathered = {zeros({n}, {.dtype = dtype, .device = gpu})};
      dist::all_gather(gathered, host.to(gpu));
      EXPECT_EQ(values_of(gathered[0].to(Device("cpu"))), want);
      Tensor scattered = zeros({n}, {.dtype = dtype, .device = gpu});
      dist::reduce_scatter(scattered, {host.to(gpu)});
      EXPECT_EQ(values_of(scattered.to(Device("cpu"))), want);
    }
  }
  Tensor avg = random_tensor({513}, kFloat32, rng).to(gpu);
  const std::vector<double> avg_want = values_of(avg.to(Device("cpu")));
  auto work = dist::all_reduce(avg, dist::ReduceOp::Avg, /*async_op=*/true);
  work->wait();
  EXPECT_TRUE(work->is_completed());
  EXPECT_EQ(values_of(avg.to(Device("cpu"))), avg_want);
  dist::barrier();
  Tensor on_cpu = ones({4});
  EXPECT_TRUE(throws_with<Error>([&] { dist::all_reduce(on_cpu); }, "all_reduce"));
  dist::destroy_process_group();
}

}  // namespace
}  // namespace hwaro::test
