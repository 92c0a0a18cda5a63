// `fedmf train`: the whole federation in one process (same state machines as
// the daemons), with per-round progress and a final summary.
#ifndef FEDMF_TOOLS_FEDMF_TRAIN_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_TRAIN_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterTrainCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_TRAIN_COMMAND_H_
