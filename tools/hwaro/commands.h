#pragma once
// The subcommands of `hwaro`; each adds itself to the CLI11 app and runs when chosen.
#include <CLI/CLI.hpp>

namespace hwaro_cli {
void add_info_command(CLI::App& app);   // guide §2: what hardware and build this is
void add_bench_command(CLI::App& app);  // CPU against GPU, measured (guide §4.2's way of timing)
void add_train_command(CLI::App& app);  // guide §3.2: the whole training loop on a real data set

}  // namespace hwaro_cli
