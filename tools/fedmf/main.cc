// fedmf: the operator command line.
#include <memory>
#include <optional>

#include "CLI/CLI.hpp"
#include "common/base/allocator.h"
#include "common/base/mutex_checks.h"
#include "common/cli/command_line.h"
#include "common/net/grpc_logging.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "tools/fedmf/advise_command.h"
#include "tools/fedmf/ca_command.h"
#include "tools/fedmf/catalogue_command.h"
#include "tools/fedmf/demo_command.h"
#include "tools/fedmf/health_command.h"
#include "tools/fedmf/job_commands.h"
#include "tools/fedmf/party_commands.h"
#include "tools/fedmf/privacy_command.h"
#include "tools/fedmf/train_command.h"

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator("fedmf");  // before any thread exists
  fedmf::base::ConfigureMutexChecks();
  // stdout is the command's output (--json, CSV, a model): log lines, e.g. a
  // client channel's TLS warning, go to stderr with the progress lines.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  // gRPC's raw lines ("E1129 … ssl_transport_security.cc …") stay out of the
  // output: each command prints the cause it diagnoses itself.
  fedmf::net::RouteGrpcLogsToSpdlog(/*quiet=*/true);
  CLI::App app{"fedmf — federated matrix factorization with differential privacy", "fedmf"};
  fedmf::cli::AddVersionFlag(app);
  app.require_subcommand(1);
  int exit_code = 0;
  fedmf::cli::RegisterTrainCommand(app, &exit_code);
  fedmf::cli::RegisterDemoCommand(app, &exit_code);
  fedmf::cli::RegisterPrivacyCommand(app, &exit_code);
  fedmf::cli::RegisterCaCommand(app, &exit_code);
  fedmf::cli::RegisterJobCommands(app, &exit_code);
  fedmf::cli::RegisterPartyCommands(app, &exit_code);
  fedmf::cli::RegisterHealthCommand(app, &exit_code);
  fedmf::cli::RegisterAdviseCommand(app, &exit_code);
  fedmf::cli::RegisterCatalogueCommand(app, &exit_code);
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return *rc;
  return exit_code;
}
