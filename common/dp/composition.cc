// Composition of (epsilon, delta) guarantees across parties and mechanisms.
#include "common/dp/composition.h"

#include <algorithm>
#include <vector>

#include "common/base/status_macros.h"
#include "common/dp/rdp_accountant.h"

namespace fedmf::dp {

PrivacyGuarantee ParallelComposition(const std::vector<PrivacyGuarantee>& parts) {
  // Disjoint data: each record is touched by exactly one part, so the worst
  // part bounds the whole.
  PrivacyGuarantee out;
  for (const PrivacyGuarantee& p : parts) {
    out.epsilon = std::max(out.epsilon, p.epsilon);
    out.delta = std::max(out.delta, p.delta);
  }
  return out;
}

PrivacyGuarantee SequentialComposition(const std::vector<PrivacyGuarantee>& parts) {
  PrivacyGuarantee out;
  for (const PrivacyGuarantee& p : parts) {
    out.epsilon += p.epsilon;
    out.delta += p.delta;
  }
  return out;
}

absl::StatusOr<double> ComposeGaussianSchedules(const std::vector<GaussianSchedule>& parts,
                                                double delta) {
  // The accountant's AddSteps adds each schedule's RDP curve order by order:
  // exactly the composition of independent mechanisms on the same record.
  RdpAccountant accountant;
  for (const GaussianSchedule& p : parts) {
    if (p.steps > 0) accountant.AddSteps(p.sample_rate, p.noise_multiplier, p.steps);
  }
  ASSIGN_OR_RETURN(auto eps, accountant.GetEpsilon(delta));
  return eps.epsilon;
}

}  // namespace fedmf::dp
