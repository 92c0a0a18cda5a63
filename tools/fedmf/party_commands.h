// `fedmf recommend | export-model | ledger`: a party's own model and privacy
// ledger, from its admin endpoint (PartyAdmin), or offline from a saved
// model (recommend --model).
#ifndef FEDMF_TOOLS_FEDMF_PARTY_COMMANDS_H_
#define FEDMF_TOOLS_FEDMF_PARTY_COMMANDS_H_

#include "CLI/CLI.hpp"

namespace fedmf::cli {

void RegisterPartyCommands(CLI::App& app, int* exit_code);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_PARTY_COMMANDS_H_
