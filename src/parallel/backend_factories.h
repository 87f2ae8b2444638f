#pragma once
// One factory per process-group backend. Each is defined by its backend's folder when that
// engine is built in, and otherwise by backends_absent.cpp as a clear error.
#include <chrono>
#include <memory>

#include "hwaro/distributed.h"

namespace hwaro::distributed::detail {

std::unique_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds timeout);
std::unique_ptr<ProcessGroup> make_nccl_group(std::chrono::milliseconds timeout);

}  // namespace hwaro::distributed::detail
