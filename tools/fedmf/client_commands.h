// Operator commands against running daemons:
//   fedmf job submit --server ADDR --spec job.yaml
//   fedmf job status --server ADDR --job ID [--json]
//   fedmf recommend  --party ADDR --user ID --top N [--job ID]
//   fedmf ledger     --party ADDR [--json]
// All take --cert-dir DIR --name NAME (an operator certificate) or --insecure.
#ifndef FEDMF_TOOLS_FEDMF_CLIENT_COMMANDS_H_
#define FEDMF_TOOLS_FEDMF_CLIENT_COMMANDS_H_

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::cli {

void RegisterClientCommands(CLI::App& app, int* exit_code);

// A job spec from YAML (keys as in docs/configuration.md, plus `roster`).
absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_CLIENT_COMMANDS_H_
