// The hwaro command: info, train and bench. Argument parsing is CLI11's (Debian's
// libcli11-dev); each subcommand lives in its own file.
#include <exception>
#include <iostream>

#include "commands.h"
#include "hwaro/hwaro.h"

int main(int argc, char** argv) {
  CLI::App app{"hwaro: PyTorch's way of working with GPUs, in C++"};
  app.require_subcommand(1);
  hwaro_cli::add_info_command(app);
  hwaro_cli::add_bench_command(app);
  hwaro_cli::add_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& e) {  // bad flags, and the exit code of a subcommand
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "hwaro: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
