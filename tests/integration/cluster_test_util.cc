#include "tests/integration/cluster_test_util.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/data/loaders.h"
#include "common/fmf/simulator.h"
#include "common/fmf/wire/job_codec.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace fs = std::filesystem;

std::string BinDir() {
  // Tests: FEDMF_TEST_BIN_DIR runs the daemons of another build (e.g. a
  // hostile-client test against the previous release's fedmf-server).
  if (const char* dir = std::getenv("FEDMF_TEST_BIN_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return FEDMF_BIN_DIR;
}

std::string Ml100kRatingsPath() { return std::string(FEDMF_SHARED_DIR) + "/data/ml-100k/u.data"; }

bool HaveMl100k() {
  std::error_code ec;
  return fs::is_regular_file(Ml100kRatingsPath(), ec);
}

cli::JobFlags SyntheticHflFlags(int rounds) {
  cli::JobFlags flags;
  flags.setting = cli::SettingKind::kHfl;
  flags.data = "synthetic";
  flags.parties = 3;
  flags.seed = 1;
  flags.rounds = rounds;
  flags.epsilon = "1";
  return flags;
}

absl::StatusOr<PlannedJob> PlanJob(const cli::JobFlags& flags, const std::string& job_id,
                                   double round_deadline_seconds, int min_parties) {
  PlannedJob plan;
  plan.flags = flags;
  auto dataset = data::LoadDataSpec(flags.data);
  if (!dataset.ok()) return dataset.status();
  plan.dataset = std::move(*dataset);
  auto config = cli::BuildJobConfig(flags, plan.dataset.range);
  if (!config.ok()) return config.status();
  config->job_id = job_id;
  plan.config = *config;
  // Exactly the split `fedmf train` simulates (train_command.cc).
  fmf::FederationOptions fed;
  fed.parties = flags.parties;
  fed.vfl_split = flags.vfl_split;
  fed.split_seed = flags.seed.value_or(1);
  fed.test_fraction = plan.config.test_fraction;
  auto federation = fmf::BuildFederationFromSpec(plan.config, plan.dataset, flags.data, fed);
  if (!federation.ok()) return federation.status();
  plan.federation = std::move(*federation);
  // Exactly the spec `fedmf demo` submits (demo_command.cc).
  plan.spec = net::SpecFromJobConfig(plan.config);
  for (int k = 0; k < flags.parties; ++k) plan.spec.add_roster(cluster::LocalCluster::PartyName(k));
  plan.spec.set_round_deadline_seconds(round_deadline_seconds);
  plan.spec.set_min_parties(min_parties);
  return plan;
}

cluster::ClusterOptions OptionsFor(const PlannedJob& plan) {
  cluster::ClusterOptions o;
  o.bin_dir = BinDir();
  o.parties = plan.flags.parties;
  o.data_spec = plan.flags.data;
  o.role = plan.config.split == fmf::SplitKind::kVertical ? "vfl" : "hfl";
  o.split_seed = plan.flags.seed.value_or(1);
  o.test_fraction = plan.config.test_fraction;
  o.seed = plan.flags.seed;
  o.rating_min = plan.dataset.range.min;
  o.rating_max = plan.dataset.range.max;
  o.vfl_split = plan.flags.vfl_split;
  o.poll_seconds = 0.5;
  o.liveness_seconds = 30;  // tests that kill a process lower this
  return o;
}

bool Contains(const google::protobuf::RepeatedPtrField<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::set<int> RoundsWith(const v1::JobStatus& st, const std::string& party, bool contributed) {
  std::set<int> out;
  for (const v1::RoundRecord& r : st.rounds()) {
    if (Contains(contributed ? r.contributors() : r.missing(), party)) out.insert(r.round());
  }
  return out;
}

const v1::PartyStatus* FindParty(const v1::JobStatus& st, const std::string& name) {
  for (const v1::PartyStatus& p : st.parties()) {
    if (p.name() == name) return &p;
  }
  return nullptr;
}

std::vector<int> LedgerRounds(const v1::LedgerResponse& ledger, const std::string& job_id) {
  std::vector<int> out;
  for (const v1::LedgerEntry& e : ledger.entries()) {
    if (e.job_id() == job_id) out.push_back(e.round());
  }
  return out;
}

std::pair<int, std::string> RunFedmf(const std::string& args, const std::string& stderr_path) {
  const std::string cmd =
      absl::StrCat(BinDir(), "/fedmf ", args, " 2>", stderr_path.empty() ? "&1" : stderr_path);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string TailOf(const std::string& text, size_t max_lines) {
  size_t pos = text.size();
  size_t lines = 0;
  while (pos > 0 && lines <= max_lines) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
    ++lines;
  }
  return text.substr(pos + 1);
}

void ClusterTest::StartCluster(const cluster::ClusterOptions& options,
                               const std::vector<int>& parties) {
  auto cluster = cluster::LocalCluster::Create(options);
  ASSERT_THAT(cluster, IsOk());
  cluster_ = std::move(*cluster);
  ASSERT_THAT(cluster_->StartServer(), IsOk()) << "fedmf-server did not start";
  ASSERT_THAT(cluster_->StartParties(parties), IsOk());
}

void ClusterTest::TearDown() {
  if (cluster_ != nullptr && HasFailure()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(cluster_->work_dir()) / "logs", ec)) {
      std::cerr << "----- " << entry.path().filename().string() << " (tail)\n"
                << TailOf(ReadFile(entry.path().string()), 40) << "\n";
    }
  }
  cluster_.reset();
}

}  // namespace fedmf::it
