// fedmf: the operator command line.
#include "CLI/CLI.hpp"
#include "tools/fedmf/advise_command.h"
#include "tools/fedmf/ca_command.h"
#include "tools/fedmf/client_commands.h"
#include "tools/fedmf/demo_command.h"
#include "tools/fedmf/health_command.h"
#include "tools/fedmf/privacy_command.h"
#include "tools/fedmf/train_command.h"

int main(int argc, char** argv) {
  CLI::App app{"fedmf — federated matrix factorization with differential privacy"};
  app.require_subcommand(1);
  int exit_code = 0;
  fedmf::cli::RegisterTrainCommand(app, &exit_code);
  fedmf::cli::RegisterDemoCommand(app, &exit_code);
  fedmf::cli::RegisterPrivacyCommand(app, &exit_code);
  fedmf::cli::RegisterCaCommand(app, &exit_code);
  fedmf::cli::RegisterClientCommands(app, &exit_code);
  fedmf::cli::RegisterHealthCommand(app, &exit_code);
  fedmf::cli::RegisterAdviseCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
