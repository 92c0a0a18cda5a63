// Composition of (epsilon, delta) guarantees across parties and mechanisms.
#include "common/dp/composition.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

PrivacyGuarantee VflPerUserComposition(const std::vector<PrivacyGuarantee>& parts) {
  // FMF Theorem 4: in VFL a user's ratings are split across parties by item,
  // the per-party Gaussian mechanisms compose like one Gaussian whose
  // epsilons add in quadrature; delta is the largest per-party delta.
  PrivacyGuarantee out;
  double sum_sq = 0;
  for (const PrivacyGuarantee& p : parts) {
    sum_sq += p.epsilon * p.epsilon;
    out.delta = std::max(out.delta, p.delta);
  }
  out.epsilon = std::sqrt(sum_sq);
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

}  // namespace fedmf::dp
