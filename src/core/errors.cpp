#include "hwaro/errors.h"

#include "core/op_id.h"

namespace hwaro {

namespace detail {
void throw_internal_error(const char* file, int line, const std::string& message) {
  throw Error(str_cat("hwaro internal error at ", file, ":", line, ": ", message,
                      " (this is a bug in hwaro; please report it with the code that triggered it)"));
}
}  // namespace detail

const char* op_name(OpId op) {
  switch (op) {
#define HWARO_OP_NAME(name) \
  case OpId::name: return #name;
    HWARO_FOR_EACH_OP(HWARO_OP_NAME)
#undef HWARO_OP_NAME
  }
  return "unknown";
}

}  // namespace hwaro
