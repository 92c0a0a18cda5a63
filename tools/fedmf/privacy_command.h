// `fedmf privacy epsilon|noise`: the RDP accountant from the command line.
#ifndef FEDMF_TOOLS_FEDMF_PRIVACY_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_PRIVACY_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

// Registers the subcommand; its callback sets *exit_code.
void RegisterPrivacyCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_PRIVACY_COMMAND_H_
