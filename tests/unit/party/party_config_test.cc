// The party's configuration file and its policy (party/party_config.h): keys
// read, refusals that name the file, the key and the fix.
#include "party/party_config.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf {
namespace {

constexpr const char* kParty = R"(
name: bank-a
server: 10.0.0.1:7443
state_dir: /var/lib/p
data:
  spec: synthetic
  setting: hfl
  parties: 3
  index: 2
  seed: 9
  rating_min: -2
  rating_max: 3
noise_seed: 17
local_threads: 2
policy:
  max_epsilon: 4
  delta: 1e-6
  allowed_settings: [hfl]
  min_granularity: user
)";

TEST(PartyConfigTest, ParsesAndFillsTlsName) {
  auto c = party::ParsePartyConfig(kParty, "p.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->name, "bank-a");
  EXPECT_EQ(c->tls.name, "bank-a");
  EXPECT_EQ(c->data.index, 2);
  EXPECT_EQ(c->data.seed, 9u);
  EXPECT_EQ(c->data.rating_min, -2);
  EXPECT_EQ(c->data.rating_max, 3);
  EXPECT_EQ(c->noise_seed, std::optional<uint64_t>(17));
  EXPECT_EQ(c->local_threads, 2);
  EXPECT_EQ(party::ParsePartyConfig("name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n"
                                    "  rating_max: 5\n",
                                    "p.yaml")
                ->local_threads,
            1);
  EXPECT_EQ(c->policy.max_epsilon, 4);
  EXPECT_EQ(c->policy.min_granularity, "user");
  // Noise-free test metrics stay home unless the party opts in.
  EXPECT_FALSE(c->policy.report_metrics);
  auto opted = party::ParsePartyConfig(std::string(kParty) + "  report_metrics: true\n", "p.yaml");
  ASSERT_THAT(opted, IsOk());
  EXPECT_TRUE(opted->policy.report_metrics);
}

TEST(PartyConfigTest, ErrorsNameTheKey) {
  struct Case {
    std::string yaml;
    std::string key;
  } cases[] = {
      {"server: x\n", "data"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n  index: 3\n  "
       "parties: 3\n",
       "data.index"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n  setting: lfl\n",
       "data.setting"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\npolicy:\n  "
       "max_epsilon: 0\n",
       "policy.max_epsilon"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\npolicy:\n  "
       "allowed_settings: [hfl, x]\n",
       "policy.allowed_settings"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n  sped: 1\n",
       "data.sped"},
      {"data:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n", "name"},
      {"name: a\ndata:\n  spec: synthetic\n", "rating_min/rating_max"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 5\n  rating_max: 1\n", "data.rating_max"},
      {"name: a\nnoise_seed: -1\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n",
       "noise_seed"},
      {"name: a\nlocal_threads: 0\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n",
       "local_threads"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\npolicy:\n  "
       "max_partner_list_ratio: 0\n",
       "policy.max_partner_list_ratio"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\npolicy:\n  "
       "max_alignments_per_day: -1\n",
       "policy.max_alignments_per_day"},
      {"name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\n  "
       "public_item_count: 9\n",
       "data.public_item_count"},
  };
  for (const Case& k : cases) {
    auto c = party::ParsePartyConfig(k.yaml, "p.yaml");
    ASSERT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument)) << k.yaml;
    EXPECT_NE(c.status().message().find(k.key), std::string::npos) << c.status();
  }
}

// Issue 56, item 2: an HFL party with a file of its own and no catalogue
// refuses to start, naming the config file and the key, instead of failing
// its first job.
TEST(PartyConfigTest, AnHflPartyWithItsOwnFileNeedsTheCatalogue) {
  const std::string own =
      "name: acme\ndata:\n  spec: csv:/data/acme.csv\n  setting: hfl\n  parties: 1\n"
      "  rating_min: 1\n  rating_max: 5\n";
  auto missing = party::ParsePartyConfig(own, "acme.yaml");
  ASSERT_THAT(missing, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("acme.yaml"));
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("key 'data.catalogue': missing"));
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("fedmf catalogue digest"));
  EXPECT_THAT(party::ParsePartyConfig(own + "  catalogue: /data/items.txt\n", "acme.yaml"), IsOk());
  // VFL aligns users instead; a share of a common file keeps positions.
  EXPECT_THAT(
      party::ParsePartyConfig("name: acme\ndata:\n  spec: csv:/data/acme.csv\n  setting: vfl\n"
                              "  rating_min: 1\n  rating_max: 5\n",
                              "acme.yaml"),
      IsOk());
  EXPECT_THAT(
      party::ParsePartyConfig("name: acme\ndata:\n  spec: movielens:/data/u.data\n  setting: hfl\n"
                              "  parties: 3\n  index: 1\n  rating_min: 1\n  rating_max: 5\n",
                              "acme.yaml"),
      IsOk());
}

// Issue 56, item 9: the same items in another order are another catalogue,
// and the refusal says that the order counts.
TEST(PartyPolicyTest, AnotherCatalogueRefusalSaysOrderMatters) {
  party::DataRole role;
  role.parties = 1;
  fmf::JobConfig job;
  job.setting = fmf::Setting::kHfl;
  job.split = fmf::SplitKind::kHorizontal;
  job.item_catalogue = "sha256:" + std::string(64, 'a');
  const std::string refusal =
      party::AlignmentRefusal(role, "sha256:" + std::string(64, 'b'), job, 2);
  EXPECT_THAT(refusal, ::testing::HasSubstr("in the same order"));
  EXPECT_THAT(refusal, ::testing::HasSubstr("without sorting it"));
}

TEST(PartyPolicyTest, RefusesWithReasons) {
  auto c = party::ParsePartyConfig(kParty, "p.yaml");
  ASSERT_THAT(c, IsOk());
  fmf::JobConfig job;
  job.setting = fmf::Setting::kHfl;
  job.split = fmf::SplitKind::kHorizontal;
  job.granularity = fmf::Granularity::kUser;
  job.epsilon = 1;
  job.delta = 1e-6;
  EXPECT_EQ(party::PolicyRefusal(c->policy, c->data, job, 1.0), "");
  auto refusal = [&](fmf::JobConfig j, double eps_after) {
    return party::PolicyRefusal(c->policy, c->data, j, eps_after);
  };
  fmf::JobConfig j = job;
  j.epsilon = 5;
  EXPECT_NE(refusal(j, 5).find("epsilon"), std::string::npos);
  EXPECT_NE(refusal(job, 4.5).find("budget"), std::string::npos);
  j = job;
  j.granularity = fmf::Granularity::kRating;
  EXPECT_NE(refusal(j, 1).find("per-user"), std::string::npos);
  j = job;
  j.delta = 1e-5;
  EXPECT_NE(refusal(j, 1).find("delta"), std::string::npos);
  j = job;
  j.setting = fmf::Setting::kHflSynSgd;
  EXPECT_NE(refusal(j, 1).find("not allowed"), std::string::npos);
  j = job;
  j.epsilon = INFINITY;
  EXPECT_NE(refusal(j, 0).find("non-private"), std::string::npos);
}

// The party chooses its partners (issue #54, item 4): by default no other
// party is allowed, a roster naming one is refused, and the refusal names it.
TEST(PartyPolicyTest, PartnersMustBeListed) {
  auto c = party::ParsePartyConfig(
      "name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  "
      "rating_max: 5\n",
      "p.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_TRUE(c->policy.allowed_partners.empty());
  EXPECT_EQ(c->policy.max_alignments_per_day, 3);
  EXPECT_EQ(c->policy.max_partner_list_ratio, 4);
  EXPECT_EQ(party::PartnerRefusal(c->policy, "a", {"a"}), "");  // alone
  const std::string refused = party::PartnerRefusal(c->policy, "a", {"a", "mallory"});
  EXPECT_NE(refused.find("'mallory'"), std::string::npos) << refused;
  EXPECT_NE(refused.find("allowed_partners"), std::string::npos) << refused;
  auto listed = party::ParsePartyConfig(
      "name: a\ndata:\n  spec: synthetic\n  rating_min: 1\n  rating_max: 5\npolicy:\n  "
      "allowed_partners: [b, c]\n  max_alignments_per_day: 1\n  max_partner_list_ratio: 2\n",
      "p.yaml");
  ASSERT_THAT(listed, IsOk());
  EXPECT_EQ(listed->policy.max_alignments_per_day, 1);
  EXPECT_EQ(listed->policy.max_partner_list_ratio, 2);
  EXPECT_EQ(party::PartnerRefusal(listed->policy, "a", {"c", "a", "b"}), "");
  EXPECT_EQ(party::UnknownPartners(listed->policy, "a", {"b", "x", "a", "y", "x"}),
            (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(party::PartnerSetKey("a", {"c", "a", "b"}), "b,c");
}

// The configurations the repository ships (docker-compose): metrics stay
// home (issue #54, 6b), and each party lists the other two as partners.
TEST(PartyConfigTest, ShippedConfigsKeepMetricsHomeAndListTheirPartners) {
  const std::vector<std::string> names{"party-a", "party-b", "party-c"};
  for (const std::string& name : names) {
    auto c =
        party::LoadPartyConfig(std::string(FEDMF_SOURCE_DIR) + "/deploy/config/" + name + ".yaml");
    ASSERT_THAT(c, IsOk()) << name;
    EXPECT_FALSE(c->policy.report_metrics) << name;
    std::vector<std::string> others;
    for (const std::string& o : names) {
      if (o != name) others.push_back(o);
    }
    EXPECT_EQ(c->policy.allowed_partners, others) << name;
  }
}

}  // namespace
}  // namespace fedmf
