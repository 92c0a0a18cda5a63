// One rule for naming an RPC's caller (common/net/caller.h), in both modes.
#include "common/net/caller.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::net {
namespace {

using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

constexpr CallerRule kParties{pki::Role::kParty, "party", "parties"};
constexpr CallerRule kServerCalls{pki::Role::kServer, "", "server"};

TEST(CallerTest, TheCertificateNamesTheCaller) {
  const pki::PeerIdentity cert{"party-1", pki::Role::kParty};
  EXPECT_EQ(*CheckCaller(&cert, kParties, "party-1"), "party-1");
  // An empty claim is the certificate's own name (every service, the Hua one too).
  EXPECT_EQ(*CheckCaller(&cert, kParties, ""), "party-1");
}

TEST(CallerTest, ACertificateCannotSpeakForAnother) {
  const pki::PeerIdentity cert{"party-0", pki::Role::kParty};
  EXPECT_THAT(CheckCaller(&cert, kParties, "party-1"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("field 'party': certificate 'party-0' cannot speak for "
                                 "'party-1'")));
}

TEST(CallerTest, TheRoleMustBeTheServices) {
  const pki::PeerIdentity device{"host-1", pki::Role::kDevice};
  EXPECT_THAT(CheckCaller(&device, kParties, ""),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("certificate 'host-1' has role device, this service is for "
                                 "parties (role party)")));
  const pki::PeerIdentity server{"fedmf-server", pki::Role::kServer};
  EXPECT_EQ(*CheckCaller(&server, kServerCalls, ""), "fedmf-server");
}

TEST(CallerTest, InsecureModeTakesTheClaimAndRequiresIt) {
  EXPECT_EQ(*CheckCaller(nullptr, kParties, "party-3"), "party-3");
  EXPECT_THAT(CheckCaller(nullptr, kParties, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field 'party': required")));
  // Calls whose request names nobody stay anonymous.
  EXPECT_EQ(*CheckCaller(nullptr, kServerCalls, ""), "");
}

}  // namespace
}  // namespace fedmf::net
