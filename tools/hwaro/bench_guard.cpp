#include "bench_guard.h"

#include "hwaro/hwaro.h"

namespace hw = hwaro;

namespace hwaro_cli {

void run_guarded(BenchReport& report, const std::string& workload, const std::string& device,
                 const std::function<void()>& measure) {
  try {
    measure();
  } catch (const hw::Error& e) {
    report.skipped.push_back({workload, device, std::string("failed: ") + e.what()});
    hw::cuda::empty_cache();  // what the failed workload held; a no-op without a GPU
  }
}

}  // namespace hwaro_cli
