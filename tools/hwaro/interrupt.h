#pragma once
// Ctrl-C during `hwaro train`: the first SIGINT asks the loop to stop after the current batch
// (it then saves a checkpoint and exits); a second one ends the process at once.
namespace hwaro_cli {

void install_interrupt_handler();
bool interrupt_requested();

}  // namespace hwaro_cli
