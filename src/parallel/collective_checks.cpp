#include "parallel/collective_checks.h"

#include <sstream>

namespace hwaro::distributed::detail {

void check_tensor(const char* collective, const char* what, const Tensor& t, DeviceType device_type,
                  const std::string& backend) {
  HWARO_CHECK(t.defined(), collective, ": ", what, " is an undefined tensor");
  HWARO_CHECK(t.device().type() == device_type, collective, ": the ", backend, " backend needs ", what, " on a ",
              Device(device_type), " device, but it is on ", t.device(), "; move it with .to(...) first");
  HWARO_CHECK(t.is_contiguous(), collective, ": ", what, " must be contiguous (collectives write into its memory ",
              "directly); pass t.contiguous() and copy the result back");
}

void check_list(const char* collective, const char* what, const std::vector<Tensor>& list, const Tensor& reference,
                int world_size) {
  HWARO_CHECK(static_cast<int>(list.size()) == world_size, collective, ": ", what, " must hold one tensor per rank (",
              world_size, "), but it holds ", list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Tensor& t = list[i];
    HWARO_CHECK(t.defined() && t.sizes() == reference.sizes() && t.dtype() == reference.dtype() &&
                    t.device() == reference.device(),
                collective, ": ", what, "[", i, "] must have the shape, dtype and device of the single tensor (",
                reference.sizes(), ", ", reference.dtype(), ", ", reference.device(), "), but it is ",
                t.defined() ? "" : "undefined", t.defined() ? t.sizes() : IntArrayRef{}, t.defined() ? ", " : "",
                t.defined() ? dtype_name(t.dtype()) : "");
  }
}

void check_reducible(const char* collective, const Tensor& t, ReduceOp op) {
  HWARO_CHECK(t.dtype() != kBool, collective, ": cannot reduce bool tensors with ", op_name(op),
              "; convert to an integer dtype first");
  HWARO_CHECK(op != ReduceOp::Avg || is_floating_point(t.dtype()), collective, ": ReduceOp::Avg needs a floating ",
              "dtype, got ", t.dtype(), "; use ReduceOp::Sum and divide, or convert to float first");
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "Sum";
    case ReduceOp::Avg: return "Avg";
    case ReduceOp::Max: return "Max";
    case ReduceOp::Min: return "Min";
  }
  return "?";
}

std::string describe_collective(const char* collective, std::optional<ReduceOp> op, const Tensor& t) {
  std::ostringstream s;
  s << collective << " (";
  if (op) s << op_name(*op) << ", ";
  s << t.numel() << " " << t.dtype() << " elements)";
  return s.str();
}

}  // namespace hwaro::distributed::detail
