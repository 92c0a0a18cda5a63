// `fedmf health ADDR [--service S] [--peer-name N] [--cert-dir D --name N | --insecure]`:
// the grpc.health.v1 Check of a running daemon, for container health checks
// and operators. Prints the serving status; exit 0 only for SERVING.
#ifndef FEDMF_TOOLS_FEDMF_HEALTH_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_HEALTH_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterHealthCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_HEALTH_COMMAND_H_
