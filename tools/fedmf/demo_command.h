// `fedmf demo`: a real federation on loopback (throw-away CA, fedmf-server and
// S fedmf-party processes), the README's main job.
#ifndef FEDMF_TOOLS_FEDMF_DEMO_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_DEMO_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterDemoCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_DEMO_COMMAND_H_
