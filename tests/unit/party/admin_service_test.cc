// The party admin endpoint's caller check (party/admin_service.h): only the
// listed operators, and one refusal for every request (no membership oracle).
#include "party/admin_service.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::party {
namespace {

TEST(AdminCallerTest, OnlyListedOperatorsAndTheSameRefusalForAnyRequest) {
  const std::vector<std::string> allowed{"alice"};
  EXPECT_THAT(CheckAdminCaller({"alice", pki::Role::kOperator}, allowed), IsOk());
  // Right name, wrong role; operator role, wrong name.
  const absl::Status party = CheckAdminCaller({"alice", pki::Role::kParty}, allowed);
  const absl::Status other = CheckAdminCaller({"mallory", pki::Role::kOperator}, allowed);
  EXPECT_EQ(party.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(std::string(other.message()),
            "certificate 'mallory' is refused: this party's admin endpoint admits only the "
            "operator certificates its config lists in 'admin_operators'");
  // An empty list refuses everyone and says which key to set.
  const absl::Status none = CheckAdminCaller({"alice", pki::Role::kOperator}, {});
  EXPECT_EQ(none.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(std::string(none.message()).find("'admin_operators'"), std::string::npos) << none;
}

}  // namespace
}  // namespace fedmf::party
