// A party's privacy ledger: the budget and what has been charged against it.
// Pure in-memory logic; the daemons persist it (one row per charge).
#ifndef FEDMF_COMMON_DP_LEDGER_H_
#define FEDMF_COMMON_DP_LEDGER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/dp/rdp_accountant.h"

namespace fedmf::dp {

// One charge: `steps` steps of the subsampled Gaussian at (q, z), tagged
// with what released it (job id / round) so replays can be detected.
struct LedgerEntry {
  std::string job_id;
  int64_t round = 0;
  double sample_rate = 0;
  double noise_multiplier = 0;
  int64_t steps = 0;
};

class PrivacyLedger {
 public:
  PrivacyLedger(double max_epsilon, double delta);

  // Epsilon after everything charged so far (all jobs composed sequentially
  // in RDP).
  absl::StatusOr<double> SpentEpsilon() const;
  // Epsilon of one job's entries alone (composed in RDP as if the ledger held
  // nothing else): what that job cost, for its status and history. 0 for a
  // job with no entries.
  absl::StatusOr<double> JobEpsilon(const std::string& job_id) const;
  // Epsilon if `entry` were charged too.
  absl::StatusOr<double> EpsilonWith(const LedgerEntry& entry) const;
  // Epsilon if all of `entries` were charged too.
  absl::StatusOr<double> EpsilonWith(const std::vector<LedgerEntry>& entries) const;
  // Charges the entry if the budget allows; FailedPrecondition (naming the
  // budget and the would-be spend) otherwise, leaving the ledger unchanged.
  // AlreadyExists if (job_id, round) was charged before.
  absl::Status Charge(const LedgerEntry& entry);
  // Re-adds an entry loaded from durable storage. No budget check: the spend
  // already happened, and a lowered budget must not erase history. Still
  // AlreadyExists for a duplicate (job_id, round).
  absl::Status Restore(const LedgerEntry& entry);

  const std::vector<LedgerEntry>& entries() const { return entries_; }
  double max_epsilon() const { return max_epsilon_; }
  double delta() const { return delta_; }

 private:
  double max_epsilon_;
  double delta_;
  std::vector<LedgerEntry> entries_;
  RdpAccountant accountant_;
  // Each job's entries composed alone, kept as they are charged so that
  // JobEpsilon (asked after every round) costs one conversion, not a replay.
  std::map<std::string, RdpAccountant> by_job_;
};

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_LEDGER_H_
