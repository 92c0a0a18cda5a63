// A party's privacy ledger: the budget and what has been charged against it.
// Pure in-memory logic; the daemons persist it (one row per charge).
#ifndef FEDMF_COMMON_DP_LEDGER_H_
#define FEDMF_COMMON_DP_LEDGER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/dp/rdp_accountant.h"

namespace fedmf::dp {

// What a charge's epsilon is about: the neighbouring relation its
// sensitivity was computed for (one rating, or all of one user's ratings).
// Charges of different units are composed separately and never added into
// one epsilon: a per-user epsilon and a per-rating epsilon bound different
// things, and a per-rating release gives no per-user bound at all.
// kUnrecorded (an entry persisted before units were recorded) is composed
// into both, the conservative reading.
enum class LedgerUnit { kRating, kUser, kUnrecorded };
// "rating" | "user" | "unrecorded"
const char* LedgerUnitName(LedgerUnit unit);
// The unit of a persisted name; kUnrecorded for any other text.
LedgerUnit LedgerUnitFromName(std::string_view name);

// One charge: `steps` steps of the subsampled Gaussian at (q, z), tagged
// with what released it (job id / round) so replays can be detected, and
// with its unit.
struct LedgerEntry {
  std::string job_id;
  int64_t round = 0;
  double sample_rate = 0;
  double noise_multiplier = 0;
  int64_t steps = 0;
  LedgerUnit unit = LedgerUnit::kUnrecorded;
};

class PrivacyLedger {
 public:
  PrivacyLedger(double max_epsilon, double delta);

  // Epsilon of one unit (kRating or kUser) after everything charged in it so
  // far (all its jobs composed sequentially in RDP; kUnrecorded entries
  // count in both).
  absl::StatusOr<double> SpentEpsilon(LedgerUnit unit) const;
  // The larger of the two units' epsilons: the one the budget binds first.
  // Not a sum: the units are composed apart (for a ledger of one unit, that
  // unit's epsilon).
  absl::StatusOr<double> SpentEpsilon() const;
  // Epsilon of one job's entries alone (composed in RDP as if the ledger held
  // nothing else): what that job cost, for its status and history. 0 for a
  // job with no entries.
  absl::StatusOr<double> JobEpsilon(const std::string& job_id) const;
  // SpentEpsilon() if `entry` were charged too.
  absl::StatusOr<double> EpsilonWith(const LedgerEntry& entry) const;
  // SpentEpsilon() if all of `entries` were charged too.
  absl::StatusOr<double> EpsilonWith(const std::vector<LedgerEntry>& entries) const;
  // Charges the entry if the budget of its unit allows (max_epsilon caps
  // each unit); FailedPrecondition (naming the budget and the would-be
  // spend) otherwise, leaving the ledger unchanged. AlreadyExists if
  // (job_id, round) was charged before.
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
  // The accountants of `entry`'s unit(s) (both for kUnrecorded).
  static std::vector<RdpAccountant*> AccountantsOf(const LedgerEntry& entry, RdpAccountant& rating,
                                                   RdpAccountant& user);
  absl::StatusOr<double> LargerEpsilon(const RdpAccountant& rating,
                                       const RdpAccountant& user) const;

  std::vector<LedgerEntry> entries_;
  RdpAccountant rating_;  // per-rating charges (and unrecorded ones)
  RdpAccountant user_;    // per-user charges (and unrecorded ones)
  // Each job's entries composed alone, kept as they are charged so that
  // JobEpsilon (asked after every round) costs one conversion, not a replay.
  std::map<std::string, RdpAccountant> by_job_;
};

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_LEDGER_H_
