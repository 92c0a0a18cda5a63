// Composition rules across parties (FMF paper Theorem 4, Proposition 3).
#ifndef FEDMF_COMMON_DP_COMPOSITION_H_
#define FEDMF_COMMON_DP_COMPOSITION_H_

#include <vector>

namespace fedmf::dp {

struct PrivacyGuarantee {
  double epsilon = 0;
  double delta = 0;
};

// Parallel composition over disjoint data: (max eps, max delta).
PrivacyGuarantee ParallelComposition(const std::vector<PrivacyGuarantee>& parts);
// VFL per-user global privacy: (sqrt(sum eps_k^2), max delta) (Theorem 4).
PrivacyGuarantee VflPerUserComposition(const std::vector<PrivacyGuarantee>& parts);
// Sequential (basic) composition: (sum eps, sum delta).
PrivacyGuarantee SequentialComposition(const std::vector<PrivacyGuarantee>& parts);

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_COMPOSITION_H_
