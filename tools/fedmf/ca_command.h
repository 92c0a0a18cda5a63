// `fedmf ca init|issue`: the federation CA (common/pki) from the command line.
#ifndef FEDMF_TOOLS_FEDMF_CA_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_CA_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

// Registers the subcommand; its callbacks set *exit_code (2 on any error).
void RegisterCaCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_CA_COMMAND_H_
