// Choosing the graph degree k and the thresholds of a session.
//
// SecAgg+ (Bell, Bonawitz, Gascón, Lepoint, Raykova, CCS 2020, §3–4 and the
// Harary-graph analysis behind their Table 2; Google's fcp/secagg uses the
// same two events). With n devices of which at most a fraction δ drop out
// and at most γ are corrupt (colluding with the server), we want, except with
// probability 2^-σ (security) resp. 2^-η (correctness):
//   (S1) the graph stays connected after removing the B = ⌊γn⌋ + ⌊δn⌋ bad
//        devices, so no strict subset of honest survivors is isolated and
//        its partial sum exposed. Because the ring order is a random
//        permutation, the bad set sits at random positions; a Harary graph
//        H(k, n) only disconnects if it contains two disjoint runs of k/2
//        consecutive ring positions. Union bound over the < n(n-k-1)/2 pairs
//        of runs:  Pr ≤ n(n-k-1)/2 · B!/(B-k)! · (n-k)!/n!  < 2^-(σ+1);
//   (S2) no device has t corrupt neighbours (they would hold t shares):
//        with A ~ Hypergeometric(n-1, ⌊γn⌋, k) the corrupt neighbours of one
//        device, t > t1 where Pr[A > t1] ≤ 2^-(σ+1)/n (union bound over the n
//        devices). Against a semi-malicious server, which may tell different
//        neighbours different stories about who dropped, additionally the
//        honest holders asked for a b-share and those asked for an s-share
//        must overlap: 2t > k + t1;
//   (C)  every device keeps at least t live holders: with
//        S ~ Hypergeometric(n-1, n-1-⌊δn⌋, k) its surviving neighbours,
//        t ≤ t2 where Pr[S < t2] ≤ 2^-η/n.
// We take the smallest even k for which (S1) holds and (S2) ≤ (C) leaves a
// threshold, and then the LARGEST admissible t = t2: reconstruction cost is
// irrelevant at these sizes, and a larger t tolerates more colluders.
// min_survivors = n - ⌊δn⌋: beyond δn dropouts the analysis no longer holds,
// so the server aborts. When the search reaches k ≥ n-1 the complete graph is
// returned instead.
//
// Complete graph (Bonawitz et al. 2017, §4, Thm 6.2/6.4): t = m = n - ⌊δn⌋
// (correctness with up to δn dropouts), required to exceed ⌊γn⌋
// (semi-honest) resp. (n + ⌊γn⌋)/2 (semi-malicious).
//
// Examples (σ = 40, η = 20, semi-honest): n = 1000, δ = 0.3, γ = 0 →
// k = 34, t = 7; n = 1000, δ = 0.1, γ = 0.05 → k = 36, t = 19. See
// tests/unit/secagg/parameters_test.cc for the table.
#ifndef FEDMF_COMMON_SECAGG_PARAMETERS_H_
#define FEDMF_COMMON_SECAGG_PARAMETERS_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "common/secagg/config.h"

namespace fedmf::secagg {

enum class AdversaryModel : uint8_t {
  kSemiHonest = 0,     // the server follows the protocol but is curious
  kSemiMalicious = 1,  // the server may lie about who dropped out
};

struct SecurityRequirements {
  double dropout_rate = 0.1;  // δ (the protocol's ω), in [0, 1)
  double corrupt_rate = 0.0;  // γ: fraction of devices colluding with the server
  int security_bits = 40;     // σ
  int correctness_bits = 20;  // η
  AdversaryModel adversary = AdversaryModel::kSemiHonest;
};

struct GraphParameters {
  GraphKind graph = GraphKind::kComplete;
  int degree = 0;  // Harary only
  int threshold = 0;
  int min_survivors = 0;
};

// SecAgg+ parameters for n devices (falls back to the complete graph for
// small n, where no k < n-1 satisfies the bounds).
absl::StatusOr<GraphParameters> ChooseSecAggPlusParameters(size_t n,
                                                           const SecurityRequirements& req);

absl::StatusOr<GraphParameters> ChooseCompleteGraphParameters(size_t n,
                                                              const SecurityRequirements& req);

// Fills graph/degree/threshold/min_survivors of `config`.
void ApplyParameters(const GraphParameters& params, SessionConfig& config);

// Exposed for tests: log of the (S1) union bound, natural log.
double LogHararyDisconnectionBound(size_t n, int degree, size_t bad);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_PARAMETERS_H_
