// `fedmf job submit | status | list | watch | cancel`: jobs on a running
// fedmf-server (its Operator service).
#ifndef FEDMF_TOOLS_FEDMF_JOB_COMMANDS_H_
#define FEDMF_TOOLS_FEDMF_JOB_COMMANDS_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterJobCommands(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_JOB_COMMANDS_H_
