// The semi-honest third party of Hua et al. section 4.2-4.3 (the
// fedmf-aggregator's state machine): sums masked reports per item mod 2^64
// and forwards only complete sums. It holds no key that could unmask a
// report (the recommender keeps every psi and beta), keeps nothing of a round
// after forwarding, and in S3 owns alpha_j, the pad it adds to the
// initialization sums and subtracts from every iteration's sum.
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

  Scenario scenario_;
  int32_t dim_;
  random::Csprng rng_;
  std::optional<AggregationPlan> plan_;  // header only (items moved to pending_)
  std::map<int32_t, Pending> pending_;
  std::map<int32_t, std::vector<uint64_t>> alpha_;
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_THIRD_PARTY_H_
