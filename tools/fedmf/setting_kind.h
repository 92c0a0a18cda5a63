// The --setting of fedmf train, demo and advise, parsed once into a type.
//
// Adding a setting (e.g. cdr): a value here, its row in kSettings
// (setting_kind.cc: name and family), then a row in the table of each
// command that runs it — kTrainRunners (train_command.cc) and/or
// kDemoRunners (demo_command.cc). A command accepts exactly the settings of
// its table; --setting's help and error list them.
#ifndef FEDMF_TOOLS_FEDMF_SETTING_KIND_H_
#define FEDMF_TOOLS_FEDMF_SETTING_KIND_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "common/fmf/job_config.h"

namespace fedmf::cli {

enum class SettingKind {
  kCentral,
  kLocal,
  kVfl,
  kHfl,
  kHflSynSgd,
  kLfl,
  kHuaS1,
  kHuaS2,
  kHuaS2Tp,
  kHuaS3,
  kCoupling,
  kCdr,
};

// "hfl-synsgd", as on the command line and in job files.
std::string SettingName(SettingKind s);
// Every setting, in the order of the table (central first).
std::vector<SettingKind> AllSettings();
// `text` as one of `allowed`; the error names --setting and lists them:
// "--setting 'x': use one of central, local, ..." (INVALID_ARGUMENT).
absl::StatusOr<SettingKind> ParseSettingKind(const std::string& text,
                                             const std::vector<SettingKind>& allowed);
absl::StatusOr<SettingKind> ParseSettingKind(const std::string& text);

// The cross-silo protocol the setting runs (common/fmf), or nullopt for the
// device settings (lfl, hua-*).
std::optional<fmf::Setting> FmfSettingOf(SettingKind s);
SettingKind SettingKindOf(fmf::Setting s);
// hua-s1, hua-s2, hua-s2-tp, hua-s3 (Hua et al.; common/hua).
bool IsHuaSetting(SettingKind s);
// hfl, vfl, hfl-synsgd: federated matrix factorization across parties.
bool IsFederatedFmf(SettingKind s);

// Registers --setting on `cmd`, into `*setting`: one of `allowed` (the
// command's table), parsed when the command line is; a bad value is a
// usage error (exit 2) naming the flag and the settings.
CLI::Option* AddSettingFlag(CLI::App* cmd, SettingKind* setting,
                            const std::vector<SettingKind>& allowed);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_SETTING_KIND_H_
