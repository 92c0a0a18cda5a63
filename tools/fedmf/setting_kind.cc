#include "tools/fedmf/setting_kind.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fedmf::cli {
namespace {

struct SettingRow {
  SettingKind kind;
  const char* name;
  std::optional<fmf::Setting> fmf;  // the cross-silo protocol, if it is one
};

const SettingRow kSettings[] = {
    {SettingKind::kCentral, "central", fmf::Setting::kCentral},
    {SettingKind::kLocal, "local", fmf::Setting::kLocal},
    {SettingKind::kVfl, "vfl", fmf::Setting::kVfl},
    {SettingKind::kHfl, "hfl", fmf::Setting::kHfl},
    {SettingKind::kHflSynSgd, "hfl-synsgd", fmf::Setting::kHflSynSgd},
    {SettingKind::kLfl, "lfl", std::nullopt},
    {SettingKind::kHuaS1, "hua-s1", std::nullopt},
    {SettingKind::kHuaS2, "hua-s2", std::nullopt},
    {SettingKind::kHuaS2Tp, "hua-s2-tp", std::nullopt},
    {SettingKind::kHuaS3, "hua-s3", std::nullopt},
    {SettingKind::kCoupling, "coupling", fmf::Setting::kCoupling},
    {SettingKind::kCdr, "cdr", std::nullopt},
};

const SettingRow& RowOf(SettingKind s) {
  return *std::find_if(std::begin(kSettings), std::end(kSettings),
                       [s](const SettingRow& r) { return r.kind == s; });
}

std::string Names(const std::vector<SettingKind>& settings, const char* separator) {
  std::vector<std::string> names;
  for (SettingKind s : settings) names.push_back(SettingName(s));
  return absl::StrJoin(names, separator);
}

}  // namespace

std::string SettingName(SettingKind s) { return RowOf(s).name; }

std::vector<SettingKind> AllSettings() {
  std::vector<SettingKind> all;
  for (const SettingRow& r : kSettings) all.push_back(r.kind);
  return all;
}

absl::StatusOr<SettingKind> ParseSettingKind(const std::string& text,
                                             const std::vector<SettingKind>& allowed) {
  for (SettingKind s : allowed) {
    if (text == RowOf(s).name) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--setting '", text, "': use one of ", Names(allowed, ", ")));
}

absl::StatusOr<SettingKind> ParseSettingKind(const std::string& text) {
  return ParseSettingKind(text, AllSettings());
}

std::optional<fmf::Setting> FmfSettingOf(SettingKind s) { return RowOf(s).fmf; }

SettingKind SettingKindOf(fmf::Setting s) {
  for (const SettingRow& r : kSettings) {
    if (r.fmf == s) return r.kind;
  }
  return SettingKind::kHfl;  // unreachable: every fmf::Setting has its row
}

bool IsHuaSetting(SettingKind s) {
  return s == SettingKind::kHuaS1 || s == SettingKind::kHuaS2 || s == SettingKind::kHuaS2Tp ||
         s == SettingKind::kHuaS3;
}

bool IsFederatedFmf(SettingKind s) {
  return s == SettingKind::kHfl || s == SettingKind::kVfl || s == SettingKind::kHflSynSgd;
}

CLI::Option* AddSettingFlag(CLI::App* cmd, SettingKind* setting,
                            const std::vector<SettingKind>& allowed) {
  return cmd
      ->add_option_function<std::string>(
          "--setting",
          [setting, allowed](const std::string& text) {
            absl::StatusOr<SettingKind> parsed = ParseSettingKind(text, allowed);
            // CLI11 prints "--setting: <why>" and the command exits 2.
            if (!parsed.ok()) throw CLI::ValidationError(std::string(parsed.status().message()));
            *setting = *parsed;
          },
          Names(allowed, " | "))
      ->type_name(absl::StrCat("TEXT:{", Names(allowed, ","), "}"))
      ->default_str(SettingName(*setting));
}

}  // namespace fedmf::cli
