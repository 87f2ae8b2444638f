#pragma once
// Argument checks every backend's collectives share: the same messages whatever the engine.
#include <optional>
#include <string>
#include <vector>

#include "hwaro/distributed.h"

namespace hwaro::distributed::detail {

// t is defined, contiguous and on a device of `device_type` ("CPU" for MPI, "CUDA" for NCCL).
void check_tensor(const char* collective, const char* what, const Tensor& t, DeviceType device_type,
                  const std::string& backend);
// list has world_size tensors, each shaped, typed and placed as reference.
void check_list(const char* collective, const char* what, const std::vector<Tensor>& list, const Tensor& reference,
                int world_size);
// Avg of integers has no exact answer and a bool sum no meaning: refused.
void check_reducible(const char* collective, const Tensor& t, ReduceOp op);
const char* op_name(ReduceOp op);
// "all_reduce (sum, 1024 Float32 elements)": how a collective is named in errors.
std::string describe_collective(const char* collective, std::optional<ReduceOp> op, const Tensor& t);

}  // namespace hwaro::distributed::detail
