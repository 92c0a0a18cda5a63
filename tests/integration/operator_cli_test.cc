// Issue #17: `fedmf job list | watch | cancel` and `job status` progress,
// run as an operator would (the fedmf binary, mTLS) against real daemons.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

class OperatorCliTest : public ClusterTest {
 protected:
  // Runs `fedmf ARGS` as the cluster's operator; stdout, and the exit code.
  std::string Fedmf(const std::string& args, int* exit_code) {
    const std::string tls = " --cert-dir " + cluster_->cert_dir() + " --name operator";
    const std::string cmd = absl::StrCat(BinDir(), "/fedmf ", args, tls, " 2>&1");
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return "popen failed";
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    const int status = pclose(p);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  }
  std::string Server() const { return absl::StrCat("127.0.0.1:", cluster_->server_port()); }
};

TEST_F(OperatorCliTest, ListWatchAndCancelJobs) {
  auto quick = PlanJob(SyntheticHflFlags(6), "quick", 60, /*min_parties=*/3);
  ASSERT_THAT(quick, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*quick), {0, 1, 2}));
  auto id = cluster_->SubmitJob(quick->spec);
  ASSERT_THAT(id, IsOk());
  int code = -1;
  // watch follows it to the end: one line per round, as the server closed them.
  const std::string watched =
      Fedmf("job watch --interval 0.1 --server " + Server() + " --job quick", &code);
  EXPECT_EQ(code, 0) << watched;
  for (int r = 1; r <= 6; ++r) {
    EXPECT_TRUE(absl::StrContains(watched, absl::StrFormat("round %4d/6", r))) << watched;
  }
  EXPECT_TRUE(absl::StrContains(watched, "job quick: finished, rounds 6/6")) << watched;
  const std::string status = Fedmf("job status --server " + Server() + " --job quick", &code);
  EXPECT_EQ(code, 0) << status;
  EXPECT_TRUE(absl::StrContains(status, "job quick: finished, rounds 6/6, ")) << status;
  // The per-round history: every round with each party's report after it,
  // this job's epsilon rising round by round.
  const std::string status_json =
      Fedmf("job status --json --server " + Server() + " --job quick", &code);
  ASSERT_EQ(code, 0) << status_json;
  const auto history = nlohmann::json::parse(status_json)["history"];
  ASSERT_EQ(history.size(), 6u) << status_json;
  EXPECT_EQ(nlohmann::json::parse(status_json)["rounds_completed"], 6) << status_json;
  // What each party's epsilon composes, from the job's spec (issue #54): an
  // HFL per-user job samples users; its steps and rate are the plan's.
  const auto st = nlohmann::json::parse(status_json);
  EXPECT_EQ(st["sampling_unit"], "user") << status_json;
  EXPECT_EQ(st["sample_rate"].get<double>(), quick->config.sample_rate);
  EXPECT_EQ(st["steps"].get<int64_t>(), quick->config.ChargedSteps());
  ASSERT_TRUE(st["accounting"].is_object()) << status_json;
  EXPECT_EQ(st["accounting"]["composes"].size(), 2u) << status_json;  // steps, size release
  // Each party's matrix traffic: at least 6 uploads and 7 downloads (Stage
  // 3 too) of one float32 shared matrix; a retried stream counts again.
  const int64_t matrix_bytes = int64_t{4} * quick->config.dim * quick->dataset.num_items;
  for (const auto& p : nlohmann::json::parse(status_json)["parties"]) {
    EXPECT_GE(p["bytes_up"].get<int64_t>(), 6 * matrix_bytes) << p;
    EXPECT_GE(p["bytes_down"].get<int64_t>(), 7 * matrix_bytes) << p;
    EXPECT_LT(p["bytes_down"].get<int64_t>(), 14 * matrix_bytes) << p;
  }
  double previous = 0;
  for (size_t r = 0; r < history.size(); ++r) {
    EXPECT_EQ(history[r]["round"], static_cast<int>(r));
    EXPECT_EQ(history[r]["contributors"].size(), 3u);
    ASSERT_EQ(history[r]["reports"].size(), 3u) << history[r];
    const auto& first = history[r]["reports"][0];
    if (first["epsilon"].is_number()) {
      EXPECT_GT(first["epsilon"].get<double>(), previous) << history[r];
      previous = first["epsilon"].get<double>();
    }
  }

  // A long job, cancelled while it runs; a queued one behind it, cancelled too.
  auto slow = PlanJob(SyntheticHflFlags(100000), "slow", 60, /*min_parties=*/3);
  ASSERT_THAT(slow, IsOk());
  ASSERT_THAT(cluster_->SubmitJob(slow->spec), IsOk());
  auto behind = PlanJob(SyntheticHflFlags(2), "behind", 60, /*min_parties=*/3);
  ASSERT_THAT(behind, IsOk());
  ASSERT_THAT(cluster_->SubmitJob(behind->spec), IsOk());
  const absl::Time give_up = absl::Now() + absl::Minutes(2);
  while (absl::Now() < give_up) {  // bounded poll until slow runs rounds
    auto st = cluster_->GetJob("slow");
    ASSERT_THAT(st, IsOk());
    if (st->rounds_size() >= 2) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  const std::string listed = Fedmf("job list --json --server " + Server(), &code);
  ASSERT_EQ(code, 0) << listed;
  const auto jobs = nlohmann::json::parse(listed)["jobs"];
  ASSERT_EQ(jobs.size(), 3u) << listed;
  EXPECT_EQ(jobs[0]["job_id"], "quick");
  EXPECT_EQ(jobs[0]["status"], "finished");
  EXPECT_EQ(jobs[0]["rounds_completed"], 6);
  EXPECT_EQ(jobs[1]["job_id"], "slow");
  EXPECT_EQ(jobs[1]["status"], "running");
  EXPECT_EQ(jobs[1]["rounds_total"], 100000);
  EXPECT_GE(jobs[1]["rounds_completed"].get<int>(), 2);
  EXPECT_EQ(jobs[1]["accepted"], 3);
  EXPECT_EQ(jobs[2]["job_id"], "behind");
  EXPECT_EQ(jobs[2]["status"], "queued (behind job slow)");

  const std::string eta = Fedmf("job status --server " + Server() + " --job slow", &code);
  EXPECT_TRUE(absl::StrContains(eta, "ETA ")) << eta;
  EXPECT_TRUE(absl::StrContains(Fedmf("job cancel --server " + Server() + " --job behind", &code),
                                "cancelled (it was pending or queued)"));
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(absl::StrContains(Fedmf("job cancel --server " + Server() + " --job slow", &code),
                                "cancelled (it was running)"));
  EXPECT_EQ(code, 0);
  auto slow_st = cluster_->GetJob("slow");
  ASSERT_THAT(slow_st, IsOk());
  EXPECT_EQ(slow_st->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(slow_st->error(), "cancelled by operator operator");
  auto behind_st = cluster_->GetJob("behind");
  ASSERT_THAT(behind_st, IsOk());
  EXPECT_EQ(behind_st->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(behind_st->rounds_size(), 0);
  const std::string again = Fedmf("job cancel --server " + Server() + " --job slow", &code);
  EXPECT_NE(code, 0);
  EXPECT_TRUE(absl::StrContains(again, "nothing to cancel")) << again;
  // Issue 56, item 7: the text list writes the setting as job files do, and
  // under a failed job its reason and one line per party that took no part.
  const std::string text_list = Fedmf("job list --server " + Server(), &code);
  ASSERT_EQ(code, 0) << text_list;
  EXPECT_FALSE(absl::StrContains(text_list, "SETTING_")) << text_list;
  EXPECT_TRUE(
      absl::StrContains(text_list, "    cancelled by operator operator before it started\n"))
      << text_list;
  EXPECT_TRUE(absl::StrContains(text_list, "    party-0              no answer (the job failed)\n"))
      << text_list;
  // watch on a failed job says so and exits 1.
  const std::string failed = Fedmf("job watch --server " + Server() + " --job slow", &code);
  EXPECT_EQ(code, 1) << failed;
  EXPECT_TRUE(absl::StrContains(failed, "failed: cancelled by operator operator")) << failed;

  // A wrong server name: the client's own error names the TLS cause (gRPC
  // alone says only "failed to connect"), with the flag that fixes it.
  const std::string wrong = Fedmf("job list --server-name party-0 --server " + Server(), &code);
  EXPECT_EQ(code, 1) << wrong;
  EXPECT_TRUE(absl::StrContains(wrong, "fedmf job list: cause: ")) << wrong;
  EXPECT_TRUE(absl::StrContains(wrong, "presents the certificate of 'server'")) << wrong;
  EXPECT_TRUE(absl::StrContains(wrong, "pass --server-name server")) << wrong;
}

// A party configured with the wrong server certificate name: its own log
// says why it cannot register (the server's log would only show a refused
// handshake), once, not on every retry.
TEST_F(OperatorCliTest, PartyLogsTheTlsCauseOfAFailedRegistration) {
  auto plan = PlanJob(SyntheticHflFlags(2), "unused", 60, /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  cluster::ClusterOptions options = OptionsFor(*plan);
  options.party_overrides[0].server_name = "coordinator";
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {0}));
  const std::string log_path = cluster_->work_dir() + "/logs/party-0.log";
  std::string log;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  // Bounded poll of the party's log, until the cause and three failed
  // registrations (so at least two retries) are in it.
  while (absl::Now() < give_up) {
    std::ifstream in(log_path);
    log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (absl::StrContains(log, "cause: ") && count("(retrying)") >= 3) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_GE(count("(retrying)"), 3u) << TailOf(log, 20);
  EXPECT_EQ(count("cause: "), 1u) << TailOf(log, 20);  // once, not per retry
  EXPECT_TRUE(absl::StrContains(
      log, "cause: 127.0.0.1:" + std::to_string(cluster_->server_port()) +
               " presents the certificate of 'server' (role server), not of 'coordinator': "
               "pass server_name (party config) server"))
      << TailOf(log, 20);
}

}  // namespace
}  // namespace fedmf::it
