#include "common/hua/recommender.h"

#include <algorithm>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/accounting.h"
#include "common/hua/model.h"
#include "common/hua/perturbation.h"

namespace fedmf::hua {
namespace {

std::vector<double> RowVector(const mf::Matrix& m, int32_t r) {
  return std::vector<double>(m.row(r).data(), m.row(r).data() + m.cols());
}
std::span<double> Row(mf::Matrix& m, int32_t r) {
  return {m.row(r).data(), static_cast<size_t>(m.cols())};
}
void FillExponential(random::Csprng& rng, mf::Matrix& m) {
  for (int32_t j = 0; j < m.rows(); ++j) {
    const std::vector<double> h = ExponentialVector(rng, static_cast<int32_t>(m.cols()));
    std::copy(h.begin(), h.end(), Row(m, j).begin());
  }
}

}  // namespace

absl::StatusOr<Recommender> Recommender::Create(const HuaParams& params, int32_t num_items,
                                                const data::RatingRange& range,
                                                const ZpCodec* codec, random::Csprng rng) {
  RETURN_IF_ERROR(ValidateHuaParams(params));
  if (params.scenario == Scenario::kTrusted) {
    return absl::InvalidArgumentError("S1 has no protocol: use TrainTrustedItems");
  }
  if (params.scenario != Scenario::kUntrusted && codec == nullptr) {
    return absl::InvalidArgumentError("masked scenarios need a Z_P codec");
  }
  if (num_items < 1) return absl::InvalidArgumentError("no items");
  return Recommender(params, num_items, range, codec, std::move(rng));
}

Recommender::Recommender(const HuaParams& params, int32_t num_items, const data::RatingRange& range,
                         const ZpCodec* codec, random::Csprng rng)
    : params_(params),
      range_(range),
      codec_(codec),
      rng_(std::move(rng)),
      v_(num_items, params.dim),
      h_(num_items, params.dim),
      raters_(num_items),
      init_users_(num_items, 0) {
  random::Csprng init = rng_.Fork("init");
  for (int32_t j = 0; j < num_items; ++j) FillInitialProfile(init, Row(v_, j));
  random::Csprng h = rng_.Fork("h");
  FillExponential(h, h_);
}

absl::Status Recommender::Register(const UserHello& hello) {
  if (t_ > 0 || open_) {
    return absl::FailedPreconditionError("users register before the first iteration");
  }
  if (hello.user < 0) return absl::InvalidArgumentError("negative user id");
  if (static_cast<size_t>(hello.user) >= registered_.size()) {
    registered_.resize(hello.user + 1, false);
    h_sent_.resize(hello.user + 1, false);
    user_items_.resize(hello.user + 1);
    releases_.resize(hello.user + 1, 0);
  }
  if (registered_[hello.user]) {
    return absl::AlreadyExistsError(absl::StrCat("user ", hello.user, " registered twice"));
  }
  for (size_t k = 0; k < hello.items.size(); ++k) {
    const int32_t j = hello.items[k];
    if (j < 0 || j >= v_.rows() || (k > 0 && j <= hello.items[k - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("user ", hello.user, ": items must be sorted, distinct and in range"));
    }
  }
  for (int32_t j : hello.items) raters_[j].push_back(hello.user);
  user_items_[hello.user] = hello.items;
  registered_[hello.user] = true;
  return absl::OkStatus();
}

const std::vector<double>* Recommender::decoded_sum(int32_t item) const {
  if (masked()) {
    auto it = active_.find(item);
    return it != active_.end() && it->second.done ? &it->second.sum : nullptr;
  }
  return nullptr;
}

const std::vector<uint64_t>* Recommender::tau_hat(int32_t item) const {
  auto it = tau_.find(item);
  return it == tau_.end() ? nullptr : &it->second;
}

int32_t Recommender::releases(int32_t user) const {
  if (user < 0 || static_cast<size_t>(user) >= releases_.size()) return 0;
  return releases_[user];
}

std::vector<int32_t> Recommender::registered_users() const {
  std::vector<int32_t> out;
  for (size_t i = 0; i < registered_.size(); ++i) {
    if (registered_[i]) out.push_back(static_cast<int32_t>(i));
  }
  return out;
}

int32_t Recommender::uninitialized_items() const {
  if (!eta_pads()) return 0;
  int32_t n = 0;
  for (size_t j = 0; j < raters_.size(); ++j) {
    if (!raters_[j].empty() && !tau_.count(static_cast<int32_t>(j))) ++n;
  }
  return n;
}

absl::StatusOr<InitRound> Recommender::StartInit(const std::vector<int32_t>& online) {
  if (!eta_pads()) {
    return absl::FailedPreconditionError(
        "initialization is S3 with the paper's mechanism only (the valid variant has no eta_j)");
  }
  if (open_ || init_open_) return absl::FailedPreconditionError("a round is still open");
  std::map<int32_t, std::vector<int32_t>> plan;
  std::set<int32_t> users(online.begin(), online.end());
  for (int32_t i : users) {
    if (i < 0 || static_cast<size_t>(i) >= registered_.size() || !registered_[i]) {
      return absl::InvalidArgumentError(absl::StrCat("user ", i, " is not registered"));
    }
    for (int32_t j : user_items_[i]) {
      if (!tau_.count(j)) plan[j].push_back(i);
    }
  }
  InitRound round;
  if (plan.empty()) return round;
  ++init_round_;
  round.plan = AggregationPlan{Phase::kInit, init_round_, 0, {}, false};
  random::Csprng beta_rng = rng_.Fork(absl::StrCat("beta/", init_round_));
  std::map<int32_t, InitRequest> requests;
  init_pending_.clear();
  for (const auto& [j, js_users] : plan) {
    InitState& st = init_pending_[j];
    st.users = static_cast<int32_t>(js_users.size());
    st.beta_sum.assign(params_.dim, 0);
    for (int32_t i : js_users) {
      std::vector<uint64_t> beta = ZpCodec::RandomMask(beta_rng, params_.dim);
      ZpCodec::Add(st.beta_sum, beta);
      InitRequest& req = requests[i];
      req.round = init_round_;
      req.user = i;
      req.items.push_back({j, st.users, RowVector(h_, j), std::move(beta)});
    }
    round.plan.items.push_back({j, js_users});
  }
  for (auto& [i, req] : requests) round.requests.push_back(std::move(req));
  init_open_ = true;
  return round;
}

absl::Status Recommender::FinishInit(const AggregateForward& f) {
  if (!init_open_) return absl::FailedPreconditionError("no open initialization round");
  if (f.phase != Phase::kInit || f.round != init_round_) {
    return absl::InvalidArgumentError("forward for another round");
  }
  for (const ItemSum& s : f.items) {
    auto it = init_pending_.find(s.item);
    if (it == init_pending_.end() || s.contributors != it->second.users ||
        s.sum.size() != static_cast<size_t>(params_.dim)) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected init sum for item ", s.item));
    }
    // tau^_j = alpha_j + sum eta^{i_s}: still padded by the third party's alpha_j.
    std::vector<uint64_t> tau = s.sum;
    ZpCodec::Sub(tau, it->second.beta_sum);
    tau_[s.item] = std::move(tau);
    init_users_[s.item] = s.contributors;
  }
  init_pending_.clear();
  init_open_ = false;
  return absl::OkStatus();
}

absl::StatusOr<Round> Recommender::StartIteration(const std::vector<int32_t>& participants) {
  if (open_ || init_open_) return absl::FailedPreconditionError("a round is still open");
  std::set<int32_t> users(participants.begin(), participants.end());
  for (int32_t i : users) {
    if (i < 0 || static_cast<size_t>(i) >= registered_.size() || !registered_[i]) {
      return absl::InvalidArgumentError(absl::StrCat("user ", i, " is not registered"));
    }
  }
  ++t_;
  pass_ = 0;
  open_ = true;
  participants_ = users;
  reported_.clear();
  dropped_.clear();
  active_.clear();
  abandoned_ = 0;
  released_now_.clear();
  if (masked() && !gaussian()) {
    // Drawn for every item, so H~_j(t) does not depend on who takes part.
    h_rho_.resize(v_.rows(), v_.cols());
    random::Csprng h = rng_.Fork(absl::StrCat("h-rho/", t_));
    FillExponential(h, h_rho_);
  } else if (!masked()) {
    direct_sum_ = mf::Matrix::Zero(v_.rows(), v_.cols());
    direct_count_.assign(v_.rows(), 0);
  }
  std::map<int32_t, std::vector<int32_t>> plan;
  for (int32_t i : users) {
    for (int32_t j : user_items_[i]) {
      // S3 (paper): an item joins only once its eta_j is fixed.
      if (eta_pads() && !tau_.count(j)) continue;
      plan[j].push_back(i);
    }
  }
  return BuildPass(plan);
}

Round Recommender::BuildPass(const std::map<int32_t, std::vector<int32_t>>& plan) {
  Round round;
  round.plan = AggregationPlan{Phase::kIteration, t_, pass_, {}, gaussian()};
  random::Csprng mask_rng = rng_.Fork(absl::StrCat("mask/", t_, "/", pass_));
  std::map<int32_t, IterationRequest> requests;
  const bool s3 = eta_pads();
  for (const auto& [j, js_users] : plan) {
    ItemState& st = active_[j];
    st.users = js_users;
    const int32_t k = static_cast<int32_t>(js_users.size());
    std::vector<std::vector<uint64_t>> shares;
    if (s3) {
      // Random additive shares of tau^_j for the k' users online now.
      std::vector<uint64_t> last = tau_.at(j);
      for (int32_t s = 0; s + 1 < k; ++s) {
        shares.push_back(ZpCodec::RandomMask(mask_rng, params_.dim));
        ZpCodec::Sub(last, shares.back());
      }
      shares.push_back(std::move(last));
    }
    if (masked()) st.psi_sum.assign(params_.dim, 0);
    for (int32_t s = 0; s < k; ++s) {
      const int32_t i = js_users[s];
      ItemRequest item;
      item.item = j;
      item.v = RowVector(v_, j);
      if (!s3 && !gaussian() && !h_sent_[i]) {
        item.eta_users = static_cast<int32_t>(raters_[j].size());
        item.h = RowVector(h_, j);
      }
      if (masked()) {
        item.rho_users = k;
        if (!gaussian()) item.h_rho = RowVector(h_rho_, j);
        item.mask = ZpCodec::RandomMask(mask_rng, params_.dim);
        ZpCodec::Add(st.psi_sum, item.mask);
        if (s3) ZpCodec::Add(item.mask, shares[s]);
      }
      IterationRequest& req = requests[i];
      req.iteration = t_;
      req.pass = pass_;
      req.user = i;
      req.items.push_back(std::move(item));
    }
    if (masked()) round.plan.items.push_back({j, js_users});
  }
  for (auto& [i, req] : requests) {
    if (!s3) h_sent_[i] = true;
    round.requests.push_back(std::move(req));
  }
  return round;
}

absl::Status Recommender::AcceptDirect(const DirectReport& r) {
  if (params_.scenario != Scenario::kUntrusted) {
    return absl::FailedPreconditionError("direct reports are S2 only");
  }
  if (!open_ || r.iteration != t_) return absl::InvalidArgumentError("report for another round");
  if (!participants_.count(r.user) || reported_.count(r.user)) {
    return absl::PermissionDeniedError(absl::StrCat("user ", r.user, " is not expected to report"));
  }
  const std::vector<int32_t>& items = user_items_[r.user];
  if (r.items.size() != items.size()) return absl::InvalidArgumentError("report is incomplete");
  for (size_t k = 0; k < r.items.size(); ++k) {
    if (r.items[k].item != items[k] ||
        r.items[k].value.size() != static_cast<size_t>(params_.dim)) {
      return absl::InvalidArgumentError("report does not match the request");
    }
  }
  for (const NoisyGradient& g : r.items) {
    std::span<double> acc = Row(direct_sum_, g.item);
    for (int32_t l = 0; l < params_.dim; ++l) acc[l] += g.value[l];
    ++direct_count_[g.item];
  }
  reported_.insert(r.user);
  released_now_.insert(r.user);
  return absl::OkStatus();
}

absl::StatusOr<Round> Recommender::AcceptForward(const AggregateForward& f) {
  if (!masked()) return absl::FailedPreconditionError("S2 has no third party");
  if (!open_ || f.phase != Phase::kIteration || f.round != t_ || f.pass != pass_) {
    return absl::InvalidArgumentError("forward for another round");
  }
  for (const ItemSum& s : f.items) {
    auto it = active_.find(s.item);
    if (it == active_.end() || it->second.done ||
        s.contributors != static_cast<int32_t>(it->second.users.size()) ||
        s.sum.size() != static_cast<size_t>(params_.dim)) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected sum for item ", s.item));
    }
    ItemState& st = it->second;
    std::vector<uint64_t> unmasked = s.sum;
    ZpCodec::Sub(unmasked, st.psi_sum);
    // S3: the third party took alpha_j off, so tau^_j's shares left exactly
    // sum encode(eta^{i_s}) over the init users in the sum.
    const uint64_t summands =
        static_cast<uint64_t>(s.contributors) + (eta_pads() ? init_users_[s.item] : 0);
    auto decoded = codec_->DecodeSum(unmasked, summands);
    if (!decoded.ok()) {
      return absl::DataLossError(absl::StrCat("item ", s.item, ": ", decoded.status().message()));
    }
    st.sum = std::move(*decoded);
    st.count = s.contributors;
    st.done = true;
    released_now_.insert(st.users.begin(), st.users.end());
  }
  dropped_.insert(f.missing_users.begin(), f.missing_users.end());
  std::map<int32_t, std::vector<int32_t>> repair;
  for (int32_t j : f.incomplete_items) {
    auto it = active_.find(j);
    if (it == active_.end() || it->second.done) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected incomplete item ", j));
    }
    std::vector<int32_t> survivors;
    for (int32_t i : it->second.users) {
      if (!dropped_.count(i)) survivors.push_back(i);
    }
    if (survivors.empty()) {
      ++abandoned_;  // v_j keeps v_j(t-1) this iteration
      active_.erase(it);
      continue;
    }
    repair[j] = std::move(survivors);
  }
  if (repair.empty()) return Round{};
  ++pass_;
  return BuildPass(repair);
}

absl::StatusOr<IterationStats> Recommender::FinishIteration() {
  if (!open_) return absl::FailedPreconditionError("no open iteration");
  IterationStats stats;
  stats.iteration = t_;
  stats.passes = pass_ + 1;
  stats.dropped_users = static_cast<int32_t>(dropped_.size());
  stats.items_abandoned = abandoned_;
  if (masked()) {
    for (const auto& [j, st] : active_) {
      if (!st.done) {
        return absl::FailedPreconditionError(
            absl::StrCat("item ", j, " has no sum yet: forward the third party's sums first"));
      }
    }
    for (auto& [j, st] : active_) {
      StepItem(Row(v_, j), st.sum, st.count, params_);
      if (gaussian()) ProjectBall(Row(v_, j), ProfileNormBound(range_));
      ++stats.items_updated;
    }
  } else {
    for (int32_t j = 0; j < v_.rows(); ++j) {
      if (direct_count_[j] == 0) continue;
      StepItem(Row(v_, j), std::span<const double>(direct_sum_.row(j).data(), v_.cols()),
               direct_count_[j], params_);
      if (gaussian()) ProjectBall(Row(v_, j), ProfileNormBound(range_));
      ++stats.items_updated;
    }
  }
  for (int32_t i : released_now_) ++releases_[i];
  released_now_.clear();
  active_.clear();
  open_ = false;
  return stats;
}

}  // namespace fedmf::hua
