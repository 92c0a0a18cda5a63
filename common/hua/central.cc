#include "common/hua/central.h"

#include <Eigen/Dense>
#include <algorithm>
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

namespace fedmf::hua {

Profiles FoldBias(const Profiles& p) {
  if (p.bias.empty()) return p;
  Profiles out{mf::Matrix(p.u.rows(), p.u.cols() + 1), mf::Matrix(p.v.rows(), p.v.cols() + 1), {}};
  out.u.leftCols(p.u.cols()) = p.u;
  for (int32_t i = 0; i < p.u.rows(); ++i) out.u(i, p.u.cols()) = p.bias[i];
  out.v.leftCols(p.v.cols()) = p.v;
  out.v.col(p.v.cols()).setOnes();
  return out;
}

Profiles UserMeans(const mf::RatingMatrix& by_user, const data::RatingRange& range) {
  Profiles out{mf::Matrix::Zero(by_user.num_users(), 0), mf::Matrix::Zero(by_user.num_items(), 0),
               std::vector<double>(by_user.num_users(), (range.min + range.max) / 2)};
  for (int32_t i = 0; i < by_user.num_users(); ++i) {
    if (by_user.RowSize(i) == 0) continue;
    double sum = 0;
    for (const auto& e : by_user.Row(i)) sum += e.value;
    out.bias[i] = sum / by_user.RowSize(i);
  }
  return out;
}

mf::Matrix TrainTrustedItemsExact(const mf::RatingMatrix& by_user, const mf::Matrix& u,
                                  mf::Matrix v, const HuaParams& p, const data::RatingRange& range,
                                  random::Csprng& rng) {
  const int32_t d = static_cast<int32_t>(v.cols());
  std::vector<Eigen::MatrixXd> a(v.rows(), Eigen::MatrixXd::Zero(d, d));
  mf::Matrix b = mf::Matrix::Zero(v.rows(), d);
  std::vector<int32_t> count(v.rows(), 0);
  for (int32_t i = 0; i < by_user.num_users(); ++i) {
    const Eigen::VectorXd ui = u.row(i).transpose();
    for (const auto& e : by_user.Row(i)) {
      a[e.item].noalias() += ui * ui.transpose();
      b.row(e.item) += e.value * u.row(i);
      ++count[e.item];
    }
  }
  for (int32_t j = 0; j < v.rows(); ++j) {
    // Drawn for every item, rated or not, so the stream does not depend on
    // which items were rated.
    const std::vector<double> eta = SampleObjectiveNoise(rng, p.s1_noise, d, p.epsilon, range);
    if (count[j] == 0) continue;
    Eigen::VectorXd rhs = b.row(j).transpose();
    for (int32_t l = 0; l < d; ++l) rhs[l] -= eta[l] / 2;
    // The paper's mu = 0.001 leaves items with fewer raters than d nearly
    // singular (v_j explodes along directions no rater spans); any ridge
    // keeps the argument (A stays value-independent), so at least 1.
    a[j].diagonal().array() += std::max(p.mu, 1.0);
    v.row(j) = a[j].ldlt().solve(rhs).transpose();
  }
  return v;
}

Profiles FitUsersLocally(const mf::RatingMatrix& by_user, const mf::Matrix& v, const HuaParams& p,
                         const data::RatingRange& range) {
  const int32_t d = static_cast<int32_t>(v.cols());
  Profiles out = UserMeans(by_user, range);
  out.u = mf::Matrix::Zero(by_user.num_users(), d);
  out.v = v;
  // lambda is the paper's tiny ridge; a user has ~20 ratings for d = 50
  // unknowns against a noisy random sketch, so the fit needs a strong one:
  // 1000, chosen on ML-100K validation ratings (fedmf train --setting hua-s1
  // --hua-validate, ridge 10, 100, 1000: 1.78, 1.57, 1.28 at eps 4;
  // docs/archive/results-2026.md, hua-valid).
  const double ridge = std::max(p.lambda, 1000.0);
  for (int32_t i = 0; i < by_user.num_users(); ++i) {
    if (by_user.RowSize(i) == 0) continue;
    Eigen::MatrixXd a = Eigen::MatrixXd::Identity(d, d) * ridge;
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(d);
    for (const auto& e : by_user.Row(i)) {
      const Eigen::VectorXd vj = v.row(e.item).transpose();
      a.noalias() += vj * vj.transpose();
      rhs += (e.value - out.bias[i]) * vj;
    }
    out.u.row(i) = a.ldlt().solve(rhs).transpose();
  }
  return out;
}

}  // namespace fedmf::hua
