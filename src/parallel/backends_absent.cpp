// The factories of the backends this build lacks: a clear error saying how to get them.
#include "parallel/backend_factories.h"

namespace hwaro::distributed::detail {

#if !HWARO_WITH_MPI
std::unique_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds) {
  HWARO_CHECK(false, "init_process_group(\"mpi\"): hwaro was built without MPI; install an MPI implementation ",
              "(Debian: libopenmpi-dev) and configure again (HWARO_MPI=ON)");
  return nullptr;
}
#endif

#if !HWARO_WITH_NCCL
std::unique_ptr<ProcessGroup> make_nccl_group(std::chrono::milliseconds) {
  HWARO_CHECK(false, "init_process_group(\"nccl\"): hwaro was built without NCCL (it needs a CUDA build with ",
              "NCCL found); use \"mpi\" for CPU tensors");
  return nullptr;
}
#endif

}  // namespace hwaro::distributed::detail
