// One rating's gradient of the coupling objective (the paper's (6)):
//
//   J_ij = 1/2 (R^_ij - R_ij)^2
//        + zeta/2 (|U_i|^2 + |V_j|^2 + sum_a S_ia^2 + sum_b W_bj^2)
//
// with respect to the rows the rating touches, the paper's (7)-(10), and its
// clipping to norm C (Algorithm 1, line 8). Two departures, both from the
// exact derivative of (3): the self-coupling terms carry their 1/m and 1/n
// ((7) writes S_ii V_j, the derivative is (1/m) S_ii V_j; (8) likewise for
// W_jj). As in the paper, the gradient is block-coordinate: the coupling
// terms' derivatives with respect to other users' U_a and other items' V_b
// are left out (they would make every sample's gradient dense).
#ifndef FEDMF_COMMON_COUPLING_GRADIENT_H_
#define FEDMF_COMMON_COUPLING_GRADIENT_H_

#include <Eigen/Dense>
#include <cstdint>

#include "common/coupling/model.h"
#include "common/data/ratings.h"

namespace fedmf::coupling {

struct SampleGradient {
  int32_t user = 0;
  int32_t item = 0;
  Eigen::VectorXd u;  // G_Ui, d                  (7)
  Eigen::VectorXd v;  // G_Vj, d                  (8)
  Eigen::VectorXd s;  // G_Si, row i of S, m      (9)
  Eigen::VectorXd w;  // G_Wj, column j of W, n   (10)

  double SquaredNorm() const {
    return u.squaredNorm() + v.squaredNorm() + s.squaredNorm() + w.squaredNorm();
  }
};

// Fills `out` (resized as needed, so one buffer serves a whole step).
// `terms` must be ComputeCouplingTerms(model); `zeta` >= 0.
void ComputeSampleGradient(const CouplingModel& model, const CouplingTerms& terms,
                           const data::Rating& rating, double zeta, SampleGradient* out);

// G <- G / max(1, |G|_2 / clip) over all four blocks together, so a sample
// moves the step's sum by at most `clip` in l2 (docs/privacy.md, section
// coupling). Returns the norm before clipping. clip > 0.
double ClipSampleGradient(double clip, SampleGradient& g);

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_GRADIENT_H_
