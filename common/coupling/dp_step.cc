#include "common/coupling/dp_step.h"

#include <cmath>

#include "common/dp/noise.h"
#include "common/mf/sampling.h"

namespace fedmf::coupling {

GradientSum GradientSum::ZerosLike(const CouplingModel& model) {
  GradientSum g;
  g.u = mf::Matrix::Zero(model.u.rows(), model.u.cols());
  g.v = mf::Matrix::Zero(model.v.rows(), model.v.cols());
  g.s = mf::Matrix::Zero(model.s.rows(), model.s.cols());
  g.wt = mf::Matrix::Zero(model.wt.rows(), model.wt.cols());
  return g;
}

void GradientSum::SetZero() {
  u.setZero();
  v.setZero();
  s.setZero();
  wt.setZero();
}

GradientSum& GradientSum::operator+=(const GradientSum& other) {
  u += other.u;
  v += other.v;
  s += other.s;
  wt += other.wt;
  return *this;
}

double GradientSum::DistanceTo(const GradientSum& other) const {
  return std::sqrt((u - other.u).squaredNorm() + (v - other.v).squaredNorm() +
                   (s - other.s).squaredNorm() + (wt - other.wt).squaredNorm());
}

std::vector<data::Rating> PoissonSampleRatings(const std::vector<data::Rating>& ratings, double q,
                                               random::Csprng& rng) {
  std::vector<data::Rating> batch;
  for (int32_t k : mf::PoissonSampleRows(static_cast<int32_t>(ratings.size()), q, rng)) {
    batch.push_back(ratings[k]);
  }
  return batch;
}

int64_t AddClippedGradients(const CouplingModel& model, const CouplingTerms& terms,
                            std::span<const data::Rating> batch, double zeta, double clip,
                            GradientSum* sum) {
  SampleGradient g;
  int64_t clipped = 0;
  for (const data::Rating& r : batch) {
    ComputeSampleGradient(model, terms, r, zeta, &g);
    if (ClipSampleGradient(clip, g) > clip) ++clipped;
    sum->u.row(g.user) += g.u.transpose();
    sum->v.row(g.item) += g.v.transpose();
    sum->s.row(g.user) += g.s.transpose();
    sum->wt.row(g.item) += g.w.transpose();
  }
  return clipped;
}

void AddGaussianNoise(double stddev, random::Csprng& rng, GradientSum* sum) {
  for (mf::Matrix* m : {&sum->u, &sum->v, &sum->s, &sum->wt}) {
    dp::AddGaussian(rng, stddev, m->data(), static_cast<size_t>(m->size()));
  }
}

void ApplyStep(const GradientSum& total, double learning_rate, double coupling_bound,
               CouplingModel* model) {
  model->u -= learning_rate * total.u;
  model->v -= learning_rate * total.v;
  // One pass each: descend and clamp.
  model->s =
      (model->s - learning_rate * total.s).cwiseMax(-coupling_bound).cwiseMin(coupling_bound);
  model->wt =
      (model->wt - learning_rate * total.wt).cwiseMax(-coupling_bound).cwiseMin(coupling_bound);
}

}  // namespace fedmf::coupling
