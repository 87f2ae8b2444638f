// `hwaro train` (guide §3.2): its flags and its exit code.
#include <iostream>
#include <memory>

#include "commands.h"
#include "train_options.h"
#include "trainer.h"

namespace hwaro_cli {

void add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* command = app.add_subcommand("train", "train the MLP or the CNN on Fashion-MNIST (or MNIST) on the best device");
  add_train_flags(*command, *options);
  command->callback([options] {
    const int code = run_training(*options, std::cout);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hwaro_cli
