// `fedmf job submit --spec FILE`: the shipped job files parse to the JobSpec
// the server expects, and a bad file fails with its path, line and key.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/hua/params.h"
#include "common/hua/wire/hua_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tools/fedmf/job_file.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::cli {
namespace {

using ::testing::HasSubstr;

class JobSpecTest : public ::testing::Test {
 protected:
  // Writes `text` to a spec file in the test's directory and returns its path.
  std::string Write(const std::string& text) {
    const std::string path = (dir_ / absl::StrCat("spec", n_++, ".yaml")).string();
    std::ofstream(path) << text;
    return path;
  }

  // A valid hua-s3 spec with `extra` lines appended and `drop` (a key) removed.
  std::string Hua(const std::string& extra = "", const std::string& drop = "") {
    std::string text;
    for (const char* line :
         {"job_id: h1", "setting: hua-s3", "epsilon: 2", "rounds: 3", "dim: 4", "max_online: 8",
          "num_items: 30", "aggregator: agg:7445", "device_hosts: [host-a:0:5, host-b:5:3]",
          "expected_users: 8", "round_deadline_seconds: 20", "paper_noise: true"}) {
      if (!drop.empty() && std::string(line).rfind(drop + ":", 0) == 0) continue;
      absl::StrAppend(&text, line, "\n");
    }
    return Write(text + extra);
  }

  const ::fedmf::testing::ScopedTempDir tmp_{"job_spec_test_"};
  const std::filesystem::path dir_ = tmp_.path();
  int n_ = 0;
};

TEST_F(JobSpecTest, ShippedHuaSpecParsesToTheComposeTopology) {
  auto spec = LoadJobSpecFile(std::string(FEDMF_SOURCE_DIR) + "/deploy/jobs/hua-s3.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->setting(), v1::SETTING_HUA_S3);
  EXPECT_EQ(spec->job_id(), "hua-s3-demo");
  EXPECT_EQ(spec->rounds(), 5);
  EXPECT_EQ(spec->dim(), 10);
  EXPECT_DOUBLE_EQ(spec->epsilon(), 1.0);
  EXPECT_DOUBLE_EQ(spec->round_deadline_seconds(), 60);
  const v1::HuaSpec& h = spec->hua();
  EXPECT_EQ(h.aggregator(), "aggregator:7445");
  EXPECT_EQ(h.max_online(), 50);
  EXPECT_EQ(h.num_items(), 400);
  EXPECT_EQ(h.expected_users(), 50);
  EXPECT_DOUBLE_EQ(h.join_deadline_seconds(), 120);
  ASSERT_EQ(h.grants_size(), 1);
  EXPECT_EQ(h.grants(0).host(), "device-host");
  EXPECT_EQ(h.grants(0).first_device(), 0u);
  EXPECT_EQ(h.grants(0).count(), 50u);
  // The shipped job runs the valid variant (docs/privacy.md, section hua).
  EXPECT_FALSE(h.paper_noise());
  EXPECT_EQ(spec->theta(), 100);
  EXPECT_DOUBLE_EQ(h.clip(), 3);
  auto job = net::HuaJobFromSpec(*spec);
  ASSERT_THAT(job, IsOk());
  EXPECT_TRUE(hua::IsPrivate(job->params));
}

// A finite epsilon runs the valid variant with the spec's theta, clip, delta
// and validation_fraction; paper_noise asks for the paper's mechanism (the
// YAML loader, the server's intake and device hosts all go through
// HuaJobFromSpec), and bad values are refused naming the key.
TEST_F(JobSpecTest, HuaSpecCarriesTheValidVariantOrThePapersMechanism) {
  auto valid = LoadJobSpecFile(
      Hua("theta: 7\nclip: 1.5\ndelta: 1e-6\nvalidation_fraction: 0.2\n", "paper_noise"));
  ASSERT_THAT(valid, IsOk());
  auto job = net::HuaJobFromSpec(*valid);
  ASSERT_THAT(job, IsOk());
  EXPECT_FALSE(job->params.paper_noise);
  EXPECT_EQ(job->params.theta, 7);
  EXPECT_DOUBLE_EQ(job->params.clip, 1.5);
  EXPECT_DOUBLE_EQ(job->params.delta, 1e-6);
  EXPECT_DOUBLE_EQ(job->params.validation_fraction, 0.2);
  EXPECT_TRUE(hua::IsPrivate(job->params));
  auto paper = LoadJobSpecFile(Hua());
  ASSERT_THAT(paper, IsOk());
  auto paper_job = net::HuaJobFromSpec(*paper);
  ASSERT_THAT(paper_job, IsOk());
  EXPECT_TRUE(paper_job->params.paper_noise);
  EXPECT_FALSE(hua::IsPrivate(paper_job->params));
  const std::string bad = Hua("clip: -1\n", "paper_noise");
  auto refused = LoadJobSpecFile(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr(bad));
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("clip"));
}

TEST_F(JobSpecTest, ShippedHflSpecParses) {
  auto spec = LoadJobSpecFile(std::string(FEDMF_SOURCE_DIR) + "/deploy/jobs/hfl.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->setting(), v1::SETTING_HFL);
  EXPECT_EQ(spec->rounds(), 10);
  EXPECT_EQ(spec->roster_size(), 3);
}

TEST_F(JobSpecTest, HuaSpecKeysReachTheirFields) {
  auto spec = LoadJobSpecFile(Hua("seed: 42\ngamma: 0.5\njoin_prob: 0.1\nleave_prob: 0.2\n"));
  ASSERT_THAT(spec, IsOk());
  EXPECT_TRUE(spec->has_seed());
  EXPECT_EQ(spec->seed(), 42u);
  EXPECT_DOUBLE_EQ(spec->epsilon(), 2.0);
  EXPECT_DOUBLE_EQ(spec->hua().gamma(), 0.5);
  EXPECT_DOUBLE_EQ(spec->hua().join_prob(), 0.1);
  EXPECT_DOUBLE_EQ(spec->hua().leave_prob(), 0.2);
  ASSERT_EQ(spec->hua().grants_size(), 2);
  EXPECT_EQ(spec->hua().grants(1).host(), "host-b");
  EXPECT_EQ(spec->hua().grants(1).first_device(), 5u);
  EXPECT_EQ(spec->hua().grants(1).count(), 3u);
  // Without `seed` the job draws from the OS CSPRNG.
  auto unseeded = LoadJobSpecFile(Hua());
  ASSERT_THAT(unseeded, IsOk());
  EXPECT_FALSE(unseeded->has_seed());
}

TEST_F(JobSpecTest, UnknownKeyNamesFileLineAndKey) {
  const std::string path = Hua("aggregater: typo:1\n");
  auto spec = LoadJobSpecFile(path);
  ASSERT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr(path + ":13: unknown key 'aggregater'"));
}

TEST_F(JobSpecTest, HuaSpecErrorsSayWhatToWrite) {
  auto no_agg = LoadJobSpecFile(Hua("", "aggregator"));
  ASSERT_THAT(no_agg, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(no_agg.status().message(), HasSubstr("'aggregator' is required"));

  auto bad_host = LoadJobSpecFile(Hua("", "device_hosts"));
  ASSERT_THAT(bad_host, StatusIs(absl::StatusCode::kInvalidArgument));  // no device hosts at all
  EXPECT_THAT(bad_host.status().message(), HasSubstr("hua.grants"));

  auto malformed = LoadJobSpecFile(Hua("device_hosts: [host-a:0]\n", "device_hosts"));
  ASSERT_THAT(malformed, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(malformed.status().message(), HasSubstr("expected HOST:FIRST:COUNT"));

  auto twice = LoadJobSpecFile(Hua("device_hosts: [a:0:10, b:9:2]\n", "device_hosts"));
  ASSERT_THAT(twice, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(twice.status().message(), HasSubstr("device 9 is granted twice"));

  auto eps = LoadJobSpecFile(Hua("epsilon: -1\n", "epsilon"));
  ASSERT_THAT(eps, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(eps.status().message(), HasSubstr("expected a positive number or 'inf'"));

  auto dim = LoadJobSpecFile(Hua("dim: 0\n", "dim"));
  ASSERT_THAT(dim, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(dim.status().message(), HasSubstr("field 'hua' / 'dim'"));

  auto range = LoadJobSpecFile(Hua("rating_min: 5\nrating_max: 1\n"));
  ASSERT_THAT(range, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(range.status().message(), HasSubstr("rating_min"));
}

}  // namespace
}  // namespace fedmf::cli

namespace fedmf::cli {
namespace {

class CouplingJobFileTest : public JobSpecTest {};

TEST_F(CouplingJobFileTest, ShippedCouplingSpecParses) {
  auto spec = LoadJobSpecFile(std::string(FEDMF_SOURCE_DIR) + "/deploy/jobs/coupling.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->setting(), v1::SETTING_COUPLING);
  EXPECT_EQ(spec->rounds(), 200);
  EXPECT_EQ(spec->local_iters(), 1);
  EXPECT_EQ(spec->roster_size(), 3);
}

TEST_F(CouplingJobFileTest, KeysReachTheSpecAndLocalItersDefaultsToOne) {
  auto spec = LoadJobSpecFile(
      Write("job_id: c1\nsetting: coupling\nepsilon: 2.78\nrounds: 2000\ndim: 10\n"
            "sample_rate: 0.01\nlearning_rate: 0.02\nclip_norm: 0.2\ncoupling_zeta: 0\n"
            "coupling_bound: 0.5\ncoupling_init: 0.05\nroster: [a, b]\n"));
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->setting(), v1::SETTING_COUPLING);
  EXPECT_EQ(spec->local_iters(), 1);
  EXPECT_EQ(spec->rounds(), 2000);
  EXPECT_EQ(spec->granularity(), v1::GRANULARITY_RATING);
  EXPECT_EQ(spec->clip_norm(), 0.2);
  ASSERT_TRUE(spec->has_coupling_zeta());
  EXPECT_EQ(spec->coupling_zeta(), 0);
  EXPECT_EQ(spec->coupling_bound(), 0.5);
  EXPECT_EQ(spec->coupling_init(), 0.05);
  // An HFL file still runs T' = 10 when it names none.
  auto hfl = LoadJobSpecFile(Write("job_id: h\nsetting: hfl\nroster: [a]\n"));
  ASSERT_THAT(hfl, IsOk());
  EXPECT_EQ(hfl->local_iters(), 10);
  // A coupling round is one step: another T' is refused by name.
  auto bad = LoadJobSpecFile(Write("job_id: c2\nsetting: coupling\nlocal_iters: 5\nroster: [a]\n"));
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(bad.status().message(), HasSubstr("local_iters"));
}

// Issue 56, item 7: a file without job_id gets "<setting>-<UTC time>", so a
// second such file is another job, not a clash with the first.
TEST_F(JobSpecTest, AFileWithoutJobIdGetsATimestampedUniqueId) {
  const std::string path = Write("setting: vfl\nepsilon: 2\nroster: [a, b]\n");
  auto first = LoadJobSpecFile(path);
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(first->job_id(), ::testing::MatchesRegex(R"(vfl-20[0-9]{6}T[0-9]{6}\.[0-9]{3}Z)"));
  std::string second_id = first->job_id();
  for (int i = 0; i < 100 && second_id == first->job_id(); ++i) {
    auto again = LoadJobSpecFile(path);  // a millisecond later, at most a few tries
    ASSERT_THAT(again, IsOk());
    second_id = again->job_id();
  }
  EXPECT_NE(second_id, first->job_id());
  auto named = LoadJobSpecFile(Write("job_id: mine\nsetting: hfl\nroster: [a]\n"));
  ASSERT_THAT(named, IsOk());
  EXPECT_EQ(named->job_id(), "mine");
}

// Issue 56, item 11: what `fedmf train/demo --job` read from a job file.
TEST_F(JobSpecTest, ReadJobFileKeepsWhichKeysTheFileSets) {
  auto f =
      ReadJobFile(Write("job_id: rehearsal\nsetting: vfl\nepsilon: 2.5\nrounds: 7\n"
                        "roster: [a, b, c]\n"));
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->config.job_id, "rehearsal");
  EXPECT_EQ(f->config.setting, fmf::Setting::kVfl);
  EXPECT_EQ(f->config.rounds, 7);
  EXPECT_DOUBLE_EQ(f->config.epsilon, 2.5);
  EXPECT_EQ(f->keys, (std::set<std::string>{"job_id", "setting", "epsilon", "rounds", "roster"}));
  EXPECT_EQ(f->roster.size(), 3u);
  EXPECT_THAT(
      ReadJobFile(Hua()).status(),
      ::fedmf::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("device hosts")));
}

}  // namespace
}  // namespace fedmf::cli
