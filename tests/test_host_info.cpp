// hw::host_info: the CPU model parsed from /proc/cpuinfo's lines, including the lines a machine's
// own file rarely has (a blank value once threw std::out_of_range from `hwaro info`).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cpu_model_name.h"
#include "hwaro/version.h"

namespace {

std::string parsed(const std::string& text) {
  std::istringstream in(text);
  return hwaro::detail::cpu_model_name(in);
}

TEST(HostInfo, CpuModelNameIsTheFirstModelNameLinesValue) {
  EXPECT_EQ(parsed("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nmodel name\t: other\n"),
            "Intel(R) Xeon(R) CPU @ 2.20GHz");
}

TEST(HostInfo, AMissingOrBlankModelNameIsUnknown) {
  EXPECT_EQ(parsed(""), "unknown");
  EXPECT_EQ(parsed("processor\t: 0\nCPU implementer\t: 0x41\n"), "unknown");  // arm64 has no model name
  EXPECT_EQ(parsed("model name\t:\n"), "unknown");
  EXPECT_EQ(parsed("model name\t:   \t\n"), "unknown");
  EXPECT_EQ(parsed("model name without a colon\n"), "unknown");
}

TEST(HostInfo, ThisMachineHasAModelAndAtLeastOneCore) {
  const hwaro::HostInfo host = hwaro::host_info();
  EXPECT_FALSE(host.cpu_model.empty());
  EXPECT_GE(host.logical_cores, 1);
}

}  // namespace
