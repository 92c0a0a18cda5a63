#include "client-device/hua_role.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/central.h"
#include "common/hua/model.h"
#include "common/hua/streams.h"
#include "common/random/csprng.h"

namespace fedmf::device {

absl::StatusOr<std::unique_ptr<HuaUserRole>> HuaUserRole::Create(const hua::HuaParams& params,
                                                                 const data::RatingRange& range,
                                                                 std::vector<HuaLocalUser> users,
                                                                 std::optional<uint64_t> seed) {
  if (params.scenario != hua::Scenario::kDynamic) {
    return absl::InvalidArgumentError("the device role runs Hua S3 (hua-s3) jobs");
  }
  ASSIGN_OR_RETURN(auto codec, hua::ZpCodec::Create(params.zp));
  std::unique_ptr<HuaUserRole> role(new HuaUserRole(params, range, codec));
  const std::optional<random::Csprng> root =
      seed ? std::optional<random::Csprng>(random::Csprng::FromSeed(*seed)) : std::nullopt;
  for (HuaLocalUser& u : users) {
    if (role->users_.count(u.user) || role->untrained_.count(u.user)) {
      return absl::InvalidArgumentError(absl::StrCat("user ", u.user, " listed twice"));
    }
    random::Csprng rng = root ? hua::UserStream(*root, u.user) : random::Csprng::FromOsEntropy();
    if (u.train.empty()) {
      if (u.test.empty()) continue;
      std::vector<double> u0(params.dim);
      random::Csprng init = rng.Fork("init");
      hua::FillInitialProfile(init, u0);
      role->untrained_[u.user] = std::move(u0);
      role->test_[u.user] = std::move(u.test);
      continue;
    }
    auto user = hua::User::Create(u.user, std::move(u.train), role->params_, role->range_,
                                  &role->codec_, std::move(rng));
    if (!user.ok()) return user.status();
    role->users_.emplace(u.user, std::move(*user));
    role->test_[u.user] = std::move(u.test);
  }
  return role;
}

std::vector<hua::UserHello> HuaUserRole::Hellos() const {
  std::vector<hua::UserHello> out;
  for (const auto& [id, u] : users_) out.push_back(u.Hello());
  return out;
}

int32_t HuaUserRole::num_ratings(int32_t user) const {
  auto it = users_.find(user);
  return it == users_.end() ? 0 : it->second.num_ratings();
}

absl::StatusOr<hua::User*> HuaUserRole::Find(int32_t user) {
  auto it = users_.find(user);
  if (it == users_.end()) {
    return absl::NotFoundError(absl::StrCat("this host does not run user ", user));
  }
  return &it->second;
}

absl::StatusOr<hua::MaskedReport> HuaUserRole::HandleInit(const hua::InitRequest& request) {
  ASSIGN_OR_RETURN(auto u, Find(request.user));
  return (u)->HandleInit(request);
}

double HuaUserRole::MaxItemNorm(const hua::HuaParams& params) { return params.zp.max_abs / 8; }

absl::StatusOr<hua::MaskedReport> HuaUserRole::HandleIteration(
    const hua::IterationRequest& request) {
  ASSIGN_OR_RETURN(auto u, Find(request.user));
  // The server's v_j, projected onto the user's own clipping set first.
  hua::IterationRequest clipped = request;
  const double bound = MaxItemNorm(params_);
  for (hua::ItemRequest& it : clipped.items) {
    double norm2 = 0;
    for (double x : it.v) {
      if (!std::isfinite(x)) {
        return absl::InvalidArgumentError(
            absl::StrCat("user ", request.user, ": v of item ", it.item, " is not finite"));
      }
      norm2 += x * x;
    }
    const double norm = std::sqrt(norm2);
    if (norm > bound) {
      for (double& x : it.v) x *= bound / norm;
    }
  }
  return (u)->HandleMasked(clipped);
}

absl::StatusOr<mf::ErrorMetrics> HuaUserRole::Evaluate(const mf::Matrix& v) {
  if (v.cols() != params_.dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("V has ", v.cols(), " columns, the job's dim is ", params_.dim));
  }
  // Only this host's users' rows are filled; mf::Evaluate reads only those.
  // The valid variant predicts b_i + u_i^T v_j (hua::FoldBias).
  int32_t max_user = 0;
  for (const auto& [id, t] : test_) max_user = std::max(max_user, id);
  hua::Profiles profiles{mf::Matrix::Zero(max_user + 1, params_.dim), v, {}};
  if (!params_.paper_noise) profiles.bias.assign(max_user + 1, (range_.min + range_.max) / 2);
  for (auto& [id, user] : users_) {
    RETURN_IF_ERROR(user.ChooseModel(v));
    std::span<const double> p = user.profile();
    if (user.uses_model()) {
      for (int32_t l = 0; l < params_.dim; ++l) profiles.u(id, l) = p[l];
    }
    if (!profiles.bias.empty()) profiles.bias[id] = user.bias();
  }
  for (const auto& [id, u0] : untrained_) {
    for (int32_t l = 0; l < params_.dim; ++l) profiles.u(id, l) = u0[l];
  }
  const hua::Profiles folded = hua::FoldBias(profiles);
  std::vector<data::Rating> test;
  for (const auto& [id, ratings] : test_) {
    for (const data::Rating& r : ratings) {
      if (r.item < 0 || r.item >= v.rows()) {
        return absl::InvalidArgumentError(
            absl::StrCat("test item ", r.item, " is outside V's ", v.rows(), " rows"));
      }
      test.push_back(r);
    }
  }
  return mf::Evaluate(test, folded.u, folded.v, range_);
}

}  // namespace fedmf::device
