// Shared helpers for the cross-silo integration tests: real fedmf-server and
// fedmf-party processes (from FEDMF_BIN_DIR) on loopback, driven through
// tools/cluster/local_cluster.h, and jobs described exactly as `fedmf train` and
// `fedmf demo` describe them (tools/fedmf/job_flags.h).
#ifndef FEDMF_TESTS_INTEGRATION_CLUSTER_TEST_UTIL_H_
#define FEDMF_TESTS_INTEGRATION_CLUSTER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "fedmf/v1/federation.pb.h"
#include "tests/testing/files.h"
#include "tools/cluster/local_cluster.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::it {

std::string BinDir();
std::string Ml100kRatingsPath();
bool HaveMl100k();

// A job as `fedmf train` builds it from flags, its wire spec as `fedmf demo`
// submits it, and the data split every party derives from it.
struct PlannedJob {
  cli::JobFlags flags;
  fmf::JobConfig config;
  v1::JobSpec spec;
  data::Dataset dataset;
  data::Federation federation;
};

// HFL on the synthetic data: 3 parties, seed 1, epsilon 1, `rounds` rounds.
cli::JobFlags SyntheticHflFlags(int rounds);

// `flags.parties` parties, roster party-0..party-{s-1}; split seed = seed
// (or 1) and test fraction as `fedmf train` uses them.
absl::StatusOr<PlannedJob> PlanJob(const cli::JobFlags& flags, const std::string& job_id,
                                   double round_deadline_seconds, int min_parties);

// Cluster options for `plan`'s data (same split as the simulator).
cluster::ClusterOptions OptionsFor(const PlannedJob& plan);

// ---- round records
std::set<int> RoundsWith(const v1::JobStatus& st, const std::string& party, bool contributed);
bool Contains(const google::protobuf::RepeatedPtrField<std::string>& list, const std::string& s);
const v1::PartyStatus* FindParty(const v1::JobStatus& st, const std::string& name);

// The ledger rounds of `job_id`, in ledger order (duplicates kept).
std::vector<int> LedgerRounds(const v1::LedgerResponse& ledger, const std::string& job_id);

using ::fedmf::testing::ReadFile;
// Runs the fedmf binary with `args`; returns (exit code, stdout and stderr),
// or only stdout when `stderr_path` names a file for stderr.
std::pair<int, std::string> RunFedmf(const std::string& args, const std::string& stderr_path = "");
std::string TailOf(const std::string& text, size_t max_lines);

// Fixture owning one LocalCluster; on failure prints the tail of every
// daemon log before the cluster (and its temp dir) goes away.
class ClusterTest : public ::testing::Test {
 protected:
  void TearDown() override;
  // Creates the cluster and starts the server and the listed parties.
  void StartCluster(const cluster::ClusterOptions& options, const std::vector<int>& parties);

  std::unique_ptr<cluster::LocalCluster> cluster_;
};

}  // namespace fedmf::it

#endif  // FEDMF_TESTS_INTEGRATION_CLUSTER_TEST_UTIL_H_
