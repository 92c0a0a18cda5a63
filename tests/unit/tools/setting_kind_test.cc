// --setting parsed once into a type (tools/fedmf/setting_kind.h).
#include "tools/fedmf/setting_kind.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::cli {
namespace {

using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

TEST(SettingKindTest, EveryNameParsesBackToItsSetting) {
  std::set<std::string> names;
  for (SettingKind s : AllSettings()) {
    ASSERT_OK_AND_ASSIGN(const SettingKind parsed, ParseSettingKind(SettingName(s)));
    EXPECT_EQ(parsed, s);
    names.insert(SettingName(s));
  }
  EXPECT_EQ(names.size(), AllSettings().size());  // no two share a name
  EXPECT_EQ(SettingName(SettingKind::kHflSynSgd), "hfl-synsgd");
  EXPECT_EQ(SettingName(SettingKind::kHuaS2Tp), "hua-s2-tp");
}

TEST(SettingKindTest, AnUnknownOrRefusedSettingNamesTheFlagAndTheChoices) {
  EXPECT_THAT(ParseSettingKind("HFL"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--setting 'HFL': use one of central, local, vfl, hfl, hfl-synsgd, lfl, "
                       "hua-s1, hua-s2, hua-s2-tp, hua-s3, coupling, cdr"));
  // A command's own table: a setting it does not run is refused with its list.
  EXPECT_THAT(
      ParseSettingKind("central", {SettingKind::kHfl, SettingKind::kLfl}),
      StatusIs(absl::StatusCode::kInvalidArgument, "--setting 'central': use one of hfl, lfl"));
  ASSERT_OK_AND_ASSIGN(const SettingKind lfl,
                       ParseSettingKind("lfl", {SettingKind::kHfl, SettingKind::kLfl}));
  EXPECT_EQ(lfl, SettingKind::kLfl);
}

TEST(SettingKindTest, CrossSiloSettingsMapToTheirProtocol) {
  for (fmf::Setting s : {fmf::Setting::kCentral, fmf::Setting::kLocal, fmf::Setting::kVfl,
                         fmf::Setting::kHfl, fmf::Setting::kHflSynSgd, fmf::Setting::kCoupling}) {
    const SettingKind kind = SettingKindOf(s);
    EXPECT_EQ(FmfSettingOf(kind), s);
    EXPECT_EQ(SettingName(kind), fmf::SettingName(s));  // the same word in a job file
  }
  for (SettingKind device : {SettingKind::kLfl, SettingKind::kHuaS1, SettingKind::kHuaS3}) {
    EXPECT_EQ(FmfSettingOf(device), std::nullopt) << SettingName(device);
  }
  EXPECT_TRUE(IsHuaSetting(SettingKind::kHuaS2Tp));
  EXPECT_FALSE(IsHuaSetting(SettingKind::kHfl));
  EXPECT_TRUE(IsFederatedFmf(SettingKind::kHflSynSgd));
  EXPECT_FALSE(IsFederatedFmf(SettingKind::kCoupling));
}

TEST(SettingKindTest, TheFlagRefusesWhatTheCommandDoesNotRun) {
  CLI::App app{"test"};
  SettingKind setting = SettingKind::kHfl;
  AddSettingFlag(&app, &setting, {SettingKind::kHfl, SettingKind::kVfl});
  app.parse("--setting vfl", /*program_name_included=*/false);
  EXPECT_EQ(setting, SettingKind::kVfl);
  try {
    app.parse("--setting lfl", false);
    ADD_FAILURE() << "lfl is not in the table";
  } catch (const CLI::ParseError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--setting 'lfl': use one of hfl, vfl"));
    EXPECT_EQ(setting, SettingKind::kVfl);  // unchanged
  }
}

}  // namespace
}  // namespace fedmf::cli
