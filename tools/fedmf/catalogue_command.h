// `fedmf catalogue digest FILE [--json]`: checks an HFL item catalogue (one
// item id per line) and prints its digest, the value a job's item_catalogue
// names and every party's data.catalogue must hash to.
#ifndef FEDMF_TOOLS_FEDMF_CATALOGUE_COMMAND_H_
#define FEDMF_TOOLS_FEDMF_CATALOGUE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterCatalogueCommand(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_CATALOGUE_COMMAND_H_
