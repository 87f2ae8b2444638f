// The CPU's model name as /proc/cpuinfo gives it, for hw::host_info (parsed apart from the file so
// that tests can feed it lines the machine's own file never has).
#pragma once

#include <istream>
#include <string>

namespace hwaro::detail {
// The first "model name" line's value; "unknown" where there is none or it is blank.
std::string cpu_model_name(std::istream& cpuinfo);
}  // namespace hwaro::detail
