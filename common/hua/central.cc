#include "common/hua/central.h"

#include <span>
#include <vector>

#include "common/hua/model.h"
#include "common/hua/perturbation.h"
#include "common/hua/streams.h"

namespace fedmf::hua {
namespace {

std::span<double> Row(mf::Matrix& m, int32_t r) {
  return {m.row(r).data(), static_cast<size_t>(m.cols())};
}
std::span<const double> Row(const mf::Matrix& m, int32_t r) {
  return {m.row(r).data(), static_cast<size_t>(m.cols())};
}

// grad_v[j] = sum over j's raters of -2 u_i e_ij, count[j] = number of raters;
// grad_u likewise when non-null. All from the current U and V.
void Gradients(const mf::RatingMatrix& x, const mf::Matrix& u, const mf::Matrix& v,
               mf::Matrix* grad_u, mf::Matrix& grad_v, std::vector<int32_t>& count) {
  grad_v.setZero();
  if (grad_u != nullptr) grad_u->setZero();
  std::fill(count.begin(), count.end(), 0);
  for (int32_t i = 0; i < x.num_users(); ++i) {
    for (const auto& e : x.Row(i)) {
      AddItemGradient(Row(u, i), Row(v, e.item), e.value, Row(grad_v, e.item));
      if (grad_u != nullptr) AddUserGradient(Row(u, i), Row(v, e.item), e.value, Row(*grad_u, i));
      ++count[e.item];
    }
  }
}

}  // namespace

Profiles InitialProfiles(const random::Csprng& root, int32_t users, int32_t items, int32_t dim) {
  Profiles p{mf::Matrix(users, dim), mf::Matrix(items, dim)};
  for (int32_t i = 0; i < users; ++i) {
    random::Csprng rng = UserStream(root, i).Fork("init");
    FillInitialProfile(rng, Row(p.u, i));
  }
  random::Csprng rng = RecommenderStream(root).Fork("init");
  for (int32_t j = 0; j < items; ++j) FillInitialProfile(rng, Row(p.v, j));
  return p;
}

Profiles TrainNonPrivate(const mf::RatingMatrix& by_user, Profiles s, const HuaParams& p) {
  mf::Matrix grad_u(s.u.rows(), s.u.cols());
  mf::Matrix grad_v(s.v.rows(), s.v.cols());
  std::vector<int32_t> count(s.v.rows());
  for (int32_t t = 0; t < p.baseline_iterations; ++t) {
    Gradients(by_user, s.u, s.v, &grad_u, grad_v, count);
    for (int32_t i = 0; i < by_user.num_users(); ++i) {
      StepUser(Row(s.u, i), Row(grad_u, i), by_user.RowSize(i), p);
    }
    for (int32_t j = 0; j < s.v.rows(); ++j) StepItem(Row(s.v, j), Row(grad_v, j), count[j], p);
  }
  return s;
}

mf::Matrix TrainTrustedItems(const mf::RatingMatrix& by_user, const mf::Matrix& u, mf::Matrix v,
                             const HuaParams& p, const data::RatingRange& range,
                             random::Csprng& rng) {
  mf::Matrix eta(v.rows(), v.cols());
  for (int32_t j = 0; j < v.rows(); ++j) {
    const std::vector<double> e =
        SampleObjectiveNoise(rng, p.s1_noise, p.dim, EpsilonPerRelease(p), range);
    std::copy(e.begin(), e.end(), Row(eta, j).begin());
  }
  mf::Matrix grad_v(v.rows(), v.cols());
  std::vector<int32_t> count(v.rows());
  for (int32_t t = 0; t < p.iterations; ++t) {
    Gradients(by_user, u, v, nullptr, grad_v, count);
    grad_v += eta;
    for (int32_t j = 0; j < v.rows(); ++j) {
      // An item nobody rated has no data term: leave it at v0 rather than let
      // its noise drive it (the paper's minimizer would be -eta / (2 mu)).
      StepItem(Row(v, j), Row(grad_v, j), count[j], p);
    }
  }
  return v;
}

}  // namespace fedmf::hua
