// `fedmf advise`: should two parties collaborate, and how privately? The
// Collaborative Learning game of Pejó, Tang and Biczók (PoPETs 2019) on the
// privacy-accuracy trade-off measured with fedmf itself (common/advise).
#ifndef FEDMF_TOOLS_FEDMF_ADVISE_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_ADVISE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterAdviseCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_ADVISE_COMMAND_H_
