// The l2-sensitivity the paper's Theorem 1 claims for Algorithm 1
// (equations (12)-(13)), kept to show next to the real one: it is NOT a
// bound on what one rating changes. Theorem 1 measures how the model the
// gradient is evaluated at can drift between neighbouring runs; but the
// gradient released at a step is computed from the sampled rating itself,
// and clipping (line 8) only bounds that by C (2C for replace-one). With
// the paper's parameters (alpha = 1e-4, C = 1/6, zeta = 0.15, c1 = c2 = 100,
// max|R^ - R| = 10, 1000 epochs) the theorem gives 0.0101 while one rating
// moves the released gradient by up to 0.167 (add/remove), 16x more
// (tests/unit/coupling/sensitivity_test.cc finds it; docs/privacy.md,
// section coupling).
#ifndef FEDMF_COMMON_COUPLING_PAPER_BOUND_H_
#define FEDMF_COMMON_COUPLING_PAPER_BOUND_H_

#include <cstdint>

namespace fedmf::coupling {

struct PaperBoundParams {
  double learning_rate = 1e-4;  // alpha
  double clip = 1.0 / 6;        // C
  double zeta = 0.15;
  int64_t max_per_item = 100;  // c1
  int64_t max_per_user = 100;  // c2
  double max_error = 10;       // max |R^_ij - R_ij|
  double init_bound = 0.01;    // |U^0_i|, |V^0_j|
  int64_t epochs = 1000;       // t <= max(c1, c2) * epochs in (13)
};

// Delta = max of the four terms of (12), with |U^t|, |V^t| from (13).
double PaperTheoremOneDelta(const PaperBoundParams& p);

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_PAPER_BOUND_H_
