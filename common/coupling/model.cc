#include "common/coupling/model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace fedmf::coupling {
namespace {

void FillUniform(random::Csprng& rng, double scale, mf::Matrix& m) {
  for (Eigen::Index k = 0; k < m.size(); ++k) {
    m.data()[k] = (2.0 * rng.NextDouble() - 1.0) * scale;
  }
}

}  // namespace

int64_t CouplingModel::ParameterCount() const {
  return static_cast<int64_t>(u.size() + v.size() + s.size() + wt.size());
}

absl::StatusOr<CouplingModel> InitialModel(int32_t num_users, int32_t num_items, int32_t dim,
                                           double offset, double init_scale, random::Csprng& rng) {
  if (num_users < 1 || num_items < 1 || dim < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("coupling model: users (%d), items (%d) and dim (%d) must be >= 1",
                        num_users, num_items, dim));
  }
  if (!(init_scale >= 0 && init_scale <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("coupling model: init scale %g must be in [0, 1]", init_scale));
  }
  const int64_t couplings = int64_t{num_users} * num_users + int64_t{num_items} * num_items;
  if (couplings > kMaxDenseCouplings) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "coupling model: %d users and %d items need %d dense couplings (S is users^2, W is "
        "items^2), more than the %d this build holds; use a data set with fewer users/items "
        "(docs/privacy.md, section coupling: sparse or low-rank couplings would scale)",
        num_users, num_items, couplings, kMaxDenseCouplings));
  }
  CouplingModel model;
  model.offset = offset;
  model.u.resize(num_users, dim);
  model.v.resize(num_items, dim);
  model.s.resize(num_users, num_users);
  model.wt.resize(num_items, num_items);
  FillUniform(rng, init_scale, model.u);
  FillUniform(rng, init_scale, model.v);
  FillUniform(rng, init_scale, model.s);
  FillUniform(rng, init_scale, model.wt);
  return model;
}

CouplingTerms ComputeCouplingTerms(const CouplingModel& model) {
  CouplingTerms t;
  t.su.noalias() = model.s * model.u / static_cast<double>(model.num_users());
  // wv_j = (1/n) sum_b W_bj V_b = (1/n) sum_b wt(j, b) V_b.
  t.wv.noalias() = model.wt * model.v / static_cast<double>(model.num_items());
  return t;
}

double Predict(const CouplingModel& model, const CouplingTerms& terms, int32_t user, int32_t item) {
  const auto ui = model.u.row(user);
  const auto vj = model.v.row(item);
  return model.offset + ui.dot(vj) + terms.su.row(user).dot(vj) + ui.dot(terms.wv.row(item));
}

mf::ErrorMetrics Evaluate(const CouplingModel& model, const std::vector<data::Rating>& ratings,
                          const data::RatingRange& range) {
  const CouplingTerms terms = ComputeCouplingTerms(model);
  return mf::EvaluateWith(ratings, [&](const data::Rating& r) {
    return std::clamp(Predict(model, terms, r.user, r.item), range.min, range.max);
  });
}

}  // namespace fedmf::coupling
