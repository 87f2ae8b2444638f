// `hwaro info` (guide §2): is CUDA there and if not why, each device's name, memory,
// multiprocessors and compute capability, the CPU and BLAS, and how hwaro was built.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "blas_core_check.h"
#include "commands.h"
#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace hwaro_cli {
namespace {

// A library's version, or why the build has none.
std::string or_absent(const std::string& version, const char* why) { return version.empty() ? why : version; }

// The default device, or "" when HWARO_DEVICE holds no device; the note says where it came from
// when HWARO_DEVICE set it, and what is wrong with it. A bad HWARO_DEVICE must not stop `hwaro
// info` (the command people run to find out what is wrong), nor pass for a usable device.
struct DefaultDevice {
  std::string device;
  std::string note;
};

DefaultDevice default_device_here() {
  const char* forced = std::getenv("HWARO_DEVICE");
  const bool from_env = forced != nullptr && *forced != '\0';
  try {
    const hw::Device device = hw::default_device();
    if (!from_env) return {device.str(), ""};
    const int count = hw::cuda::device_count();
    if (device.is_cuda() && (device.has_index() ? device.index() : 0) >= count) {
      return {device.str(), "set by HWARO_DEVICE, but there is no such device: " + std::to_string(count) +
                                " CUDA device(s)" + (count == 0 ? " (" + hw::cuda::unavailable_reason() + ")" : "")};
    }
    return {device.str(), "set by HWARO_DEVICE"};
  } catch (const hw::Error& e) {
    return {"", "HWARO_DEVICE='" + std::string(forced ? forced : "") + "' is not a device: " + e.what()};
  }
}

nlohmann::json info_as_json() {
  const hw::BuildInfo build = hw::build_info();
  const hw::HostInfo host = hw::host_info();
  const DefaultDevice default_device = default_device_here();
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < hw::cuda::device_count(); ++i) {
    const auto p = hw::cuda::get_device_properties(i);
    devices.push_back({{"device", "cuda:" + std::to_string(i)},
                       {"name", p.name},
                       {"total_memory_bytes", p.total_memory},
                       {"multi_processor_count", p.multi_processor_count},
                       {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
                       {"clock_rate_khz", p.clock_rate_khz}});
  }
  return {
      {"version", build.version},
      {"cuda", {{"available", hw::cuda::is_available()},
                {"reason_unavailable", hw::cuda::unavailable_reason()},
                {"device_count", hw::cuda::device_count()},
                {"devices", devices}}},
      {"cpu", {{"model", host.cpu_model}, {"logical_cores", host.logical_cores}, {"threads", hw::get_num_threads()}}},
      {"blas", build.blas},
      {"blas_note", blas_core_warning_here()},
      {"default_device",
       default_device.device.empty() ? nlohmann::json(nullptr) : nlohmann::json(default_device.device)},
      {"default_device_note", default_device.note},
      {"build", {{"type", build.build_type},
                 {"compiler", build.compiler},
                 {"cuda_backend", build.cuda_built},
                 {"cuda", build.cuda_version},
                 {"cublas", build.cublas_version},
                 {"cudnn", build.cudnn_version},
                 {"nccl", build.nccl_version}}},
  };
}

void print_info() {
  const hw::BuildInfo build = hw::build_info();
  const hw::HostInfo host = hw::host_info();
  std::cout << "hwaro " << build.version << "\n\n";
  if (hw::cuda::is_available()) {
    std::cout << "CUDA available: yes, " << hw::cuda::device_count() << " device(s)\n";
    for (int i = 0; i < hw::cuda::device_count(); ++i) {
      const auto p = hw::cuda::get_device_properties(i);
      std::cout << "  cuda:" << i << "  " << p.name << ", " << (p.total_memory >> 20) << " MiB, "
                << p.multi_processor_count << " multiprocessors, compute capability " << p.major << "." << p.minor
                << "\n";
    }
  } else {
    std::cout << "CUDA available: no (" << hw::cuda::unavailable_reason() << ")\n";
  }
  const DefaultDevice default_device = default_device_here();
  std::cout << "default device: " << (default_device.device.empty() ? "none" : default_device.device)
            << (default_device.note.empty() ? "" : " (" + default_device.note + ")") << "\n\n";
  std::cout << "CPU: " << host.cpu_model << ", " << host.logical_cores << " logical cores, hwaro uses "
            << hw::get_num_threads() << " threads\n";
  std::cout << "BLAS: " << build.blas << "\n";
  if (const std::string note = blas_core_warning_here(); !note.empty()) std::cout << note << "\n";
  std::cout << "\n";
  std::cout << "build: " << build.build_type << ", " << build.compiler << "\n";
  if (build.cuda_built) {
    std::cout << "  CUDA backend: on (CUDA " << build.cuda_version << ", cuBLAS " << build.cublas_version
              << ", cuDNN " << or_absent(build.cudnn_version, "not found: convolutions are im2col + cuBLAS")
              << ", NCCL " << or_absent(build.nccl_version, "not found: no NCCL process group") << ")\n";
  } else {
    std::cout << "  CUDA backend: off\n";
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "what hardware is there (guide §2) and how hwaro was built");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print the same facts as one JSON object, for scripts");
  cmd->callback([json] {
    if (*json) {
      std::cout << info_as_json().dump(2) << "\n";
    } else {
      print_info();
    }
  });
}

}  // namespace hwaro_cli
