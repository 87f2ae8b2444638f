// hw::Device: parsing, printing, comparison and hashing; default_device() and hw::cuda's answers
// on a machine without a GPU.
#include <cstdlib>
#include <sstream>
#include <unordered_set>

#include "support/test_support.h"

namespace hw = hwaro;

namespace {

// Sets an environment variable for one scope and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(Device, ParsesEveryAcceptedForm) {
  const hw::Device cpu("cpu");
  EXPECT_TRUE(cpu.is_cpu());
  EXPECT_FALSE(cpu.is_cuda());
  EXPECT_EQ(cpu.type(), hw::kCPU);
  EXPECT_FALSE(cpu.has_index());

  const hw::Device cuda("cuda");
  EXPECT_TRUE(cuda.is_cuda());
  EXPECT_EQ(cuda.index(), -1);
  EXPECT_FALSE(cuda.has_index());

  const hw::Device cuda1("cuda:1");
  EXPECT_EQ(cuda1.type(), hw::kCUDA);
  EXPECT_EQ(cuda1.index(), 1);
  EXPECT_TRUE(cuda1.has_index());

  EXPECT_EQ(hw::Device("test:3").type(), hw::kTestDevice);
  EXPECT_EQ(hw::Device("test:3").index(), 3);
  EXPECT_EQ(hw::Device(std::string("cuda:12")).index(), 12);
  EXPECT_EQ(hw::Device("cpu:0"), hw::Device("cpu"));  // one CPU device
}

TEST(Device, PrintsAsTorchDevice) {
  EXPECT_EQ(hw::Device("cpu").str(), "cpu");
  EXPECT_EQ(hw::Device("cpu:0").str(), "cpu");
  EXPECT_EQ(hw::Device("cuda").str(), "cuda");
  EXPECT_EQ(hw::Device(hw::kCUDA, 1).str(), "cuda:1");
  EXPECT_EQ(hw::Device(hw::kTestDevice, 2).str(), "test:2");
  std::ostringstream out;
  out << hw::Device("cuda:3") << " " << hw::Device(hw::kCPU);
  EXPECT_EQ(out.str(), "cuda:3 cpu");
  for (const char* text : {"cpu", "cuda", "cuda:0", "cuda:7", "test:1"}) EXPECT_EQ(hw::Device(text).str(), text);
}

TEST(Device, ComparesAndHashesByTypeAndIndex) {
  EXPECT_EQ(hw::Device("cuda:1"), hw::Device(hw::kCUDA, 1));
  EXPECT_NE(hw::Device("cuda:1"), hw::Device("cuda:0"));
  EXPECT_NE(hw::Device("cuda"), hw::Device("cuda:0"));  // "no index" is not index 0
  EXPECT_NE(hw::Device("cpu"), hw::Device("cuda"));
  EXPECT_NE(hw::Device("test:0"), hw::Device("cuda:0"));
  const std::hash<hw::Device> hash;
  EXPECT_EQ(hash(hw::Device("cuda:1")), hash(hw::Device(hw::kCUDA, 1)));
  std::unordered_set<hw::Device> set{hw::Device("cpu"), hw::Device("cpu:0"), hw::Device("cuda"), hw::Device("cuda:0"),
                                     hw::Device("cuda:1"), hw::Device("test:0"), hw::Device("cuda:1")};
  EXPECT_EQ(set.size(), 5u);
  EXPECT_EQ(set.count(hw::Device(hw::kCUDA, 0)), 1u);
}

TEST(Device, MalformedStringsNameTheAcceptedForms) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpu", "unknown device type 'gpu'"},
      {"cuda:", "'' is not a device index"},
      {"cuda:-1", "'-1' is not a device index"},
      {"cuda:x", "'x' is not a device index"},
      {"cpu:1", "there is one CPU device"},
      {"", "unknown device type ''"},
      {"CUDA", "unknown device type 'CUDA'"},
      {"cuda:1:2", "'1:2' is not a device index"},
      {"cuda: 1", "' 1' is not a device index"},
  };
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([text = text] { hw::Device d(text); },
                                                 std::string("invalid device string '") + text + "'"));
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([text = text] { hw::Device d(text); }, reason));
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([text = text] { hw::Device d(text); },
                                                 "accepted forms: 'cpu', 'cuda', 'cuda:N', 'test:N'"));
  }
}

TEST(Device, BadIndicesFromTheTypedConstructor) {
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::Device d(hw::kCPU, 1); }, "CPU device index must be -1 or 0, got 1"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::Device d(hw::kCUDA, -2); },
                                               "device index must be -1 (none) or non-negative, got -2"));
}

TEST(Device, IndexPastTheLastDeviceConstructsButFailsOnUse) {
  const hw::Device d("cuda:7");
  EXPECT_EQ(d.index(), 7);
  if (hw::cuda::is_available()) {
    ASSERT_LT(hw::cuda::device_count(), 8) << "this test needs cuda:7 to be past the last device";
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::zeros({2}, {.device = d}); }, "device 'cuda:7' does not exist: "));
  } else {
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::zeros({2}, {.device = d}); }, "no cuda device is available"));
  }
  // The test backend has devices, so an index past them says how many exist.
  hw::test::other_device();
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([] { hw::zeros({2}, {.device = hw::Device("test:9")}); },
                                                    "device 'test:9' does not exist: 4 test devices are visible"));
}

TEST(Device, DefaultDeviceIsCudaWhereAvailableAndHonoursTheEnvironment) {
  // The guide's pattern: "cuda" (the current GPU) where one is available, else the CPU.
  const hw::Device best = hw::cuda::is_available() ? hw::Device("cuda") : hw::Device("cpu");
  {
    ScopedEnv env("HWARO_DEVICE", nullptr);
    EXPECT_EQ(hw::default_device(), best);
  }
  {
    ScopedEnv env("HWARO_DEVICE", "");
    EXPECT_EQ(hw::default_device(), best);
  }
  {
    ScopedEnv env("HWARO_DEVICE", "cuda:1");
    EXPECT_EQ(hw::default_device(), hw::Device(hw::kCUDA, 1));
  }
  {
    ScopedEnv env("HWARO_DEVICE", "cpu");
    EXPECT_EQ(hw::default_device(), hw::Device("cpu"));
  }
  {
    ScopedEnv env("HWARO_DEVICE", "gpu");
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([] { hw::default_device(); }, "invalid device string 'gpu'"));
  }
}

TEST(Device, CudaQueriesAnswerCleanlyWithoutAGpu) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(hw::cuda::is_available());
  EXPECT_EQ(hw::cuda::device_count(), 0);
  EXPECT_FALSE(hw::cuda::unavailable_reason().empty());
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([] { hw::cuda::get_device_properties(0); },
                                                    "CUDA device 0 does not exist"));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([] { hw::cuda::get_device_name(0); }, "does not exist"));
}

TEST(Device, MovingToCudaWithoutAGpuSaysNoneIsAvailable) {
  if (hw::cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  const hw::Tensor x = hw::ones({3});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { (void)x.to("cuda"); },
                                               "no cuda device is available"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { (void)x.cuda(); }, "use hw::default_device() to fall back"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { (void)x.to(hw::Device("cuda:1")); }, "'cuda:1' cannot be used"));
  EXPECT_EQ(x.to_vector<float>(), std::vector<float>({1.f, 1.f, 1.f}));  // the source is untouched
}

TEST(Device, TensorsReportTheirDevice) {
  EXPECT_EQ(hw::zeros({2}).device(), hw::Device("cpu"));
  EXPECT_TRUE(hw::zeros({2}).is_cpu());
  hw::test::other_device();  // registers the test backend
  const hw::Tensor t = hw::zeros({2}, {.device = hw::Device("test")});  // no index: the current one
  EXPECT_EQ(t.device(), hw::Device("test:0"));
  EXPECT_FALSE(t.is_cpu());
  EXPECT_FALSE(t.is_cuda());
}
