#include "interrupt.h"

#include <csignal>

namespace hwaro_cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // the next Ctrl-C is not caught
}

}  // namespace

void install_interrupt_handler() {
  g_interrupted = 0;
  std::signal(SIGINT, on_interrupt);
}

bool interrupt_requested() { return g_interrupted != 0; }

}  // namespace hwaro_cli
