#include "common/coupling/gradient.h"

#include <cmath>

namespace fedmf::coupling {

void ComputeSampleGradient(const CouplingModel& model, const CouplingTerms& terms,
                           const data::Rating& rating, double zeta, SampleGradient* out) {
  const int32_t i = rating.user;
  const int32_t j = rating.item;
  const double inv_m = 1.0 / model.num_users();
  const double inv_n = 1.0 / model.num_items();
  const double e = Predict(model, terms, i, j) - rating.value;
  const auto ui = model.u.row(i).transpose();
  const auto vj = model.v.row(j).transpose();
  out->user = i;
  out->item = j;
  // (7): dR^/dU_i = V_j + (1/m) S_ii V_j + wv_j.
  out->u.noalias() =
      e * ((1.0 + inv_m * model.s(i, i)) * vj + terms.wv.row(j).transpose()) + zeta * ui;
  // (8): dR^/dV_j = U_i + su_i + (1/n) W_jj U_i.
  out->v.noalias() =
      e * ((1.0 + inv_n * model.wt(j, j)) * ui + terms.su.row(i).transpose()) + zeta * vj;
  // (9): dR^/dS_ia = (1/m) U_a.V_j.
  out->s.noalias() = (e * inv_m) * (model.u * vj) + zeta * model.s.row(i).transpose();
  // (10): dR^/dW_bj = (1/n) V_b.U_i.
  out->w.noalias() = (e * inv_n) * (model.v * ui) + zeta * model.wt.row(j).transpose();
}

double ClipSampleGradient(double clip, SampleGradient& g) {
  const double norm = std::sqrt(g.SquaredNorm());
  if (norm > clip) {
    const double scale = clip / norm;
    g.u *= scale;
    g.v *= scale;
    g.s *= scale;
    g.w *= scale;
  }
  return norm;
}

}  // namespace fedmf::coupling
