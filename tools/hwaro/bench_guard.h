#pragma once
// One workload of `hwaro bench`, kept from taking the others down with it.
#include <functional>
#include <string>

#include "bench_report.h"

namespace hwaro_cli {

// Runs `measure`, which adds its row or skip to `report`. An hw::Error out of it (the GPU out of
// memory at a large batch, say) becomes a skip of `workload` on `device` that quotes the error, and
// the GPU's cached blocks go back to the driver: the rows measured before, and the workloads after,
// are kept instead of the whole bench ending with nothing printed.
void run_guarded(BenchReport& report, const std::string& workload, const std::string& device,
                 const std::function<void()>& measure);

}  // namespace hwaro_cli
