// The semi-honest third party of Hua et al. section 4.2-4.3 (the
// fedmf-aggregator's state machine): sums masked reports per item mod 2^64
// and forwards only complete sums. It holds no key that could unmask a
// report (the recommender keeps every psi and beta), keeps nothing of a round
// after forwarding, and in S3 owns alpha_j, the pad it adds to the
// initialization sums and subtracts from every iteration's sum (the paper's
// mechanism; the valid variant has no eta_j and no pads: plan.gaussian).
//
// Two rules keep the recommender's view of the noise what the users
// calibrated it to, whatever plans it sends (it is the adversary):
// - a masked value is accepted only if its `shares` (the k' the user split
//   her noise by) equals the number of users the plan names for the item, so
//   a complete sum carries k' shares of sigma^2 / k' each: sigma^2;
// - at most one sum per (iteration, item) is forwarded in a job: a plan for
//   an earlier iteration, or for an item whose sum of this iteration was
//   already forwarded, is refused (a user re-sends the same block with the
//   same draws in a repair pass; two sums of one (t, j) over different user
//   sets could be combined).
#ifndef FEDMF_COMMON_HUA_THIRD_PARTY_H_
#define FEDMF_COMMON_HUA_THIRD_PARTY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

class ThirdParty {
 public:
  // `scenario` is S2-TP or S3; `rng` draws alpha_j (S3).
  static absl::StatusOr<ThirdParty> Create(Scenario scenario, int32_t dim, random::Csprng rng);

  // Starts a round: only the planned (user, item) reports are accepted.
  absl::Status Begin(const AggregationPlan& plan);
  // Rejects reports for another round, from users or for items not in the
  // plan, duplicates and malformed vectors.
  absl::Status Accept(const MaskedReport& report);
  // Complete sums (S3: + alpha_j for initialization, - alpha_j for
  // iterations), the items whose sums are withheld and who failed to report;
  // then forgets the round.
  absl::StatusOr<AggregateForward> Flush();

  bool has_alpha(int32_t item) const { return alpha_.count(item) > 0; }

 private:
  ThirdParty(Scenario scenario, int32_t dim, random::Csprng rng)
      : scenario_(scenario), dim_(dim), rng_(std::move(rng)) {}

  struct Pending {
    std::set<int32_t> expected;
    std::set<int32_t> received;
    std::vector<uint64_t> sum;
  };
  bool pads() const { return scenario_ == Scenario::kDynamic && !gaussian_.value_or(false); }

  Scenario scenario_;
  int32_t dim_;
  random::Csprng rng_;
  std::optional<AggregationPlan> plan_;  // header only (items moved to pending_)
  std::map<int32_t, Pending> pending_;
  std::map<int32_t, std::vector<uint64_t>> alpha_;
  std::optional<bool> gaussian_;  // fixed by the first plan of the job
  int32_t last_iteration_ = 0;    // the latest iteration round begun
  std::set<int32_t> forwarded_;   // items whose sum of last_iteration_ was forwarded
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_THIRD_PARTY_H_
