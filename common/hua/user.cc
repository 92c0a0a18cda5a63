#include "common/hua/user.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/dp/noise.h"
#include "common/hua/accounting.h"
#include "common/hua/model.h"
#include "common/hua/perturbation.h"
#include "common/mf/sampling.h"

namespace fedmf::hua {
namespace {

absl::Status Bad(int32_t user, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("user ", user, ": ", what));
}

// Splits `ratings` (sorted by item) into `keep` of them, uniformly at random
// (mf::RandomTrim's partial Fisher-Yates), and the rest; both stay sorted.
void KeepRandom(const std::vector<RatedItem>& ratings, int32_t keep, random::Csprng rng,
                std::vector<RatedItem>& kept, std::vector<RatedItem>& rest) {
  std::vector<data::Rating> row;
  for (const RatedItem& r : ratings) row.push_back({0, r.item, static_cast<float>(r.rating)});
  const mf::RatingMatrix x(1, ratings.back().item + 1, row);
  const mf::RatingMatrix k = mf::RandomTrim(x, keep, rng);
  std::set<int32_t> chosen;
  for (const auto& e : k.Row(0)) chosen.insert(e.item);
  for (const RatedItem& r : ratings) (chosen.count(r.item) ? kept : rest).push_back(r);
}

}  // namespace

absl::StatusOr<User> User::Create(int32_t id, std::vector<RatedItem> ratings,
                                  const HuaParams& params, const data::RatingRange& range,
                                  const ZpCodec* codec, random::Csprng rng) {
  RETURN_IF_ERROR(ValidateHuaParams(params));
  std::sort(ratings.begin(), ratings.end(),
            [](const RatedItem& a, const RatedItem& b) { return a.item < b.item; });
  for (size_t k = 0; k < ratings.size(); ++k) {
    if (ratings[k].item < 0) return Bad(id, "negative item id");
    if (k > 0 && ratings[k].item == ratings[k - 1].item) return Bad(id, "duplicate item");
    if (ratings[k].rating < range.min || ratings[k].rating > range.max) {
      return Bad(id, "rating outside the declared range");
    }
  }
  const bool masked =
      params.scenario == Scenario::kUntrustedThirdParty || params.scenario == Scenario::kDynamic;
  if (masked && codec == nullptr) return Bad(id, "masked scenarios need a Z_P codec");
  if (params.paper_noise) return User(id, std::move(ratings), params, range, codec, std::move(rng));
  if (params.scenario == Scenario::kTrusted) return Bad(id, "S1 has no user protocol");
  ASSIGN_OR_RETURN(HuaPrivacy plan, PlanPrivacy(params, range));
  // Held out first (drawn from the user's own stream), never in a release.
  std::vector<RatedItem> validation;
  const auto held = std::min<size_t>(
      static_cast<size_t>(std::lround(params.validation_fraction * ratings.size())),
      ratings.empty() ? 0 : ratings.size() - 1);
  if (held > 0) {
    std::vector<RatedItem> kept;
    KeepRandom(ratings, static_cast<int32_t>(ratings.size() - held), rng.Fork("validation"), kept,
               validation);
    ratings = std::move(kept);
  }
  double sum = 0;
  for (const RatedItem& r : ratings) sum += r.rating;
  const double bias = ratings.empty() ? (range.min + range.max) / 2 : sum / ratings.size();
  if (ratings.size() > static_cast<size_t>(params.theta)) {
    // theta of the rated items, uniformly, from the user's own stream: the
    // choice never looks at a value (the kept set is registered, public).
    std::vector<RatedItem> kept, dropped;
    KeepRandom(ratings, params.theta, rng.Fork("trim"), kept, dropped);
    ratings = std::move(kept);
  }
  User user(id, std::move(ratings), params, range, codec, std::move(rng));
  user.norm_bound_ = ProfileNormBound(range);
  user.clip_ = plan.clip;
  user.sigma_ = plan.sigma;
  user.bias_ = bias;
  user.validation_ = std::move(validation);
  ProjectBall(user.u_, user.norm_bound_);
  user.u_prev_ = user.u_;
  return user;
}

User::User(int32_t id, std::vector<RatedItem> ratings, const HuaParams& params,
           const data::RatingRange& range, const ZpCodec* codec, random::Csprng rng)
    : id_(id),
      ratings_(std::move(ratings)),
      params_(params),
      range_(range),
      laplace_b_(params.paper_noise ? LaplaceScale(EpsilonPerRelease(params), range, params.dim)
                                    : 0.0),
      codec_(codec),
      rng_(std::move(rng)),
      u_(params.dim),
      eta_(ratings_.size()) {
  random::Csprng init = rng_.Fork("init");
  FillInitialProfile(init, u_);
  u_prev_ = u_;
}

UserHello User::Hello() const {
  UserHello h;
  h.user = id_;
  for (const RatedItem& r : ratings_) h.items.push_back(r.item);
  return h;
}

int32_t User::Position(int32_t item) const {
  auto it = std::lower_bound(ratings_.begin(), ratings_.end(), item,
                             [](const RatedItem& r, int32_t j) { return r.item < j; });
  if (it == ratings_.end() || it->item != item) return -1;
  return static_cast<int32_t>(it - ratings_.begin());
}

// The blocks are drawn for ALL rated items at once, so the noise for item j
// does not depend on which other items a request happens to contain (a repair
// pass asks for a subset).
std::span<const double> User::EtaZ(int32_t pos) {
  const size_t d = static_cast<size_t>(params_.dim);
  if (eta_z_.empty()) {
    eta_z_.resize(ratings_.size() * d);
    random::Csprng z = rng_.Fork("eta");
    dp::FillGaussian(z, 1.0, eta_z_.data(), eta_z_.size());
  }
  return std::span<const double>(eta_z_).subspan(pos * d, d);
}

// Reusing iteration t's block in a repair pass is safe because the third
// party never forwards a sum that misses a report, so the recommender sees at
// most one decodable sum per (t, j).
std::span<const double> User::RhoZ(int32_t iteration, int32_t pos) {
  const size_t d = static_cast<size_t>(params_.dim);
  if (rho_z_iteration_ != iteration) {
    rho_z_.resize(ratings_.size() * d);
    random::Csprng z = rng_.Fork(absl::StrCat("rho~/", iteration));
    dp::FillGaussian(z, 1.0, rho_z_.data(), rho_z_.size());
    rho_z_iteration_ = iteration;
  }
  return std::span<const double>(rho_z_).subspan(pos * d, d);
}

absl::Status User::Begin(const IterationRequest& req, std::vector<int32_t>& pos) {
  if (req.user != id_) return Bad(id_, absl::StrCat("request addressed to user ", req.user));
  const bool repair = req.iteration == iteration_ && req.pass > 0;
  if (!repair && !(req.iteration > iteration_ && req.pass == 0)) {
    return Bad(id_, absl::StrCat("unexpected iteration ", req.iteration, " pass ", req.pass,
                                 " (at iteration ", iteration_, ")"));
  }
  if (gaussian() && req.iteration > params_.iterations) {
    // The noise was calibrated for T releases: a server that asks for more
    // (it lied about T, or replays) gets nothing.
    return Bad(id_, absl::StrCat("iteration ", req.iteration,
                                 " is beyond the job's T = ", params_.iterations));
  }
  pos.clear();
  for (const ItemRequest& it : req.items) {
    const int32_t p = Position(it.item);
    if (p < 0) return Bad(id_, absl::StrCat("asked about item ", it.item, " it did not rate"));
    if (it.v.size() != static_cast<size_t>(params_.dim)) return Bad(id_, "v_j has the wrong size");
    pos.push_back(p);
  }
  if (!repair) {
    iteration_ = req.iteration;
    u_prev_ = u_;
    ++releases_;  // counted before anything is computed: never undercounted
  }
  return absl::OkStatus();
}

std::vector<double> User::Gradient(const ItemRequest& item, int32_t pos) const {
  std::vector<double> g(params_.dim, 0.0);
  AddItemGradient(u_prev_, item.v, ratings_[pos].rating - bias_, g);
  return g;
}

absl::Status User::ComputeBlocks(const IterationRequest& req, const std::vector<int32_t>& pos) {
  if (req.pass > 0) {
    for (const ItemRequest& it : req.items) {
      if (!blocks_.count(it.item)) {
        return Bad(id_, absl::StrCat("repair pass ", req.pass, " of iteration ", req.iteration,
                                     " asks about item ", it.item, ", not in its pass 0"));
      }
    }
    return absl::OkStatus();
  }
  for (size_t k = 0; k < req.items.size(); ++k) {
    if (k > 0 && req.items[k].item <= req.items[k - 1].item) {
      return Bad(id_, "the items of a request must be sorted and distinct");
    }
  }
  blocks_.clear();
  v_used_.clear();
  double norm2 = 0;
  for (size_t k = 0; k < req.items.size(); ++k) {
    // The server's v_j, projected onto the user's own ball first.
    std::vector<double> v = req.items[k].v;
    ProjectBall(v, norm_bound_);
    std::vector<double> g(params_.dim, 0.0);
    AddItemGradient(u_prev_, v, ratings_[pos[k]].rating - bias_, g);
    for (double x : g) norm2 += x * x;
    blocks_[req.items[k].item] = std::move(g);
    v_used_.push_back(std::move(v));
  }
  const double norm = std::sqrt(norm2);
  if (norm > clip_) {
    for (auto& [item, g] : blocks_) {
      for (double& x : g) x = x * clip_ / norm;
    }
  }
  return absl::OkStatus();
}

std::vector<double> User::NoisyBlock(int32_t item, int32_t iteration, int32_t pos, int32_t shares) {
  std::vector<double> x = blocks_.at(item);
  if (sigma_ > 0) {
    const double share = sigma_ / std::sqrt(static_cast<double>(shares));
    std::span<const double> z = RhoZ(iteration, pos);
    for (size_t l = 0; l < x.size(); ++l) {
      x[l] += share * std::clamp(z[l], -kNoiseTailSigmas, kNoiseTailSigmas);
    }
  }
  return x;
}

void User::StepProfile(const IterationRequest& req, const std::vector<int32_t>& pos) {
  if (req.pass > 0) return;
  std::vector<double> g(params_.dim, 0.0);
  for (size_t k = 0; k < req.items.size(); ++k) {
    const std::vector<double>& v = gaussian() ? v_used_[k] : req.items[k].v;
    AddUserGradient(u_prev_, v, ratings_[pos[k]].rating - bias_, g);
  }
  StepUser(u_, g, static_cast<int32_t>(req.items.size()), params_, norm_bound_);
}

absl::Status User::StoreEta(const ItemRequest& item, int32_t pos) {
  if (!item.h.empty()) {
    if (item.h.size() != static_cast<size_t>(params_.dim) || item.eta_users < 1) {
      return Bad(id_, "malformed H_j");
    }
    eta_[pos] = LaplacePiece(item.h, EtaZ(pos), item.eta_users, laplace_b_);
  }
  if (eta_[pos].empty()) return Bad(id_, absl::StrCat("no H_j yet for item ", item.item));
  return absl::OkStatus();
}

absl::Status User::ChooseModel(const mf::Matrix& v) {
  if (!gaussian()) return absl::OkStatus();
  double model = 0, mean = 0;
  for (const RatedItem& r : validation_) {
    if (r.item >= v.rows() || v.cols() != params_.dim) {
      return Bad(id_, absl::StrCat("V has no row for held-out item ", r.item));
    }
    double pred = bias_;
    for (int32_t l = 0; l < params_.dim; ++l) pred += u_[l] * v(r.item, l);
    pred = std::clamp(pred, range_.min, range_.max);
    model += (r.rating - pred) * (r.rating - pred);
    mean += (r.rating - bias_) * (r.rating - bias_);
  }
  uses_model_ = model <= mean;
  return absl::OkStatus();
}

absl::StatusOr<MaskedReport> User::HandleInit(const InitRequest& req) {
  if (params_.scenario != Scenario::kDynamic) return Bad(id_, "initialization is S3 only");
  if (gaussian()) return Bad(id_, "the valid variant has no eta_j to initialize");
  if (req.user != id_) return Bad(id_, "init request for another user");
  MaskedReport out{Phase::kInit, req.round, 0, id_, {}};
  for (const InitItem& it : req.items) {
    const int32_t p = Position(it.item);
    if (p < 0) return Bad(id_, absl::StrCat("init for item ", it.item, " it did not rate"));
    if (it.h.size() != static_cast<size_t>(params_.dim) || it.beta.size() != it.h.size() ||
        it.users < 1) {
      return Bad(id_, "malformed init item");
    }
    ASSIGN_OR_RETURN(auto tau, codec_->Encode(LaplacePiece(it.h, EtaZ(p), it.users, laplace_b_)));
    ZpCodec::Add(tau, it.beta);
    out.items.push_back({it.item, std::move(tau), it.users});
  }
  return out;
}

absl::StatusOr<DirectReport> User::HandleDirect(const IterationRequest& req) {
  if (params_.scenario != Scenario::kUntrusted) return Bad(id_, "direct reports are S2 only");
  std::vector<int32_t> pos;
  RETURN_IF_ERROR(Begin(req, pos));
  DirectReport out{req.iteration, id_, {}};
  if (gaussian()) {
    if (req.pass > 0) return Bad(id_, "S2 has no repair passes");
    RETURN_IF_ERROR(ComputeBlocks(req, pos));
    for (size_t k = 0; k < req.items.size(); ++k) {
      out.items.push_back(
          {req.items[k].item, NoisyBlock(req.items[k].item, req.iteration, pos[k], 1)});
    }
    StepProfile(req, pos);
    return out;
  }
  // Fresh every iteration: defeats the difference attack (eq. 13).
  random::Csprng rho = rng_.Fork(absl::StrCat("rho/", req.iteration, "/", req.pass));
  for (size_t k = 0; k < req.items.size(); ++k) {
    RETURN_IF_ERROR(StoreEta(req.items[k], pos[k]));
    std::vector<double> g = Gradient(req.items[k], pos[k]);
    const std::vector<double> r =
        DifferenceAttackNoise(rho, params_.dim, EpsilonPerRelease(params_), range_);
    for (int32_t l = 0; l < params_.dim; ++l) g[l] += eta_[pos[k]][l] + r[l];
    out.items.push_back({req.items[k].item, std::move(g)});
  }
  StepProfile(req, pos);
  return out;
}

absl::StatusOr<MaskedReport> User::HandleMasked(const IterationRequest& req) {
  const bool s3 = params_.scenario == Scenario::kDynamic;
  if (params_.scenario != Scenario::kUntrustedThirdParty && !s3) {
    return Bad(id_, "masked reports are S2-TP / S3 only");
  }
  std::vector<int32_t> pos;
  RETURN_IF_ERROR(Begin(req, pos));
  MaskedReport out{Phase::kIteration, req.iteration, req.pass, id_, {}};
  if (gaussian()) {
    RETURN_IF_ERROR(ComputeBlocks(req, pos));
    for (size_t k = 0; k < req.items.size(); ++k) {
      const ItemRequest& it = req.items[k];
      if (it.rho_users < 1 || it.mask.size() != static_cast<size_t>(params_.dim)) {
        return Bad(id_, absl::StrCat("malformed masked request for item ", it.item));
      }
      ASSIGN_OR_RETURN(auto phi,
                       codec_->Encode(NoisyBlock(it.item, req.iteration, pos[k], it.rho_users)));
      ZpCodec::Add(phi, it.mask);
      out.items.push_back({it.item, std::move(phi), it.rho_users});
    }
    StepProfile(req, pos);
    return out;
  }
  for (size_t k = 0; k < req.items.size(); ++k) {
    const ItemRequest& it = req.items[k];
    if (it.h_rho.size() != static_cast<size_t>(params_.dim) || it.rho_users < 1 ||
        it.mask.size() != it.h_rho.size()) {
      return Bad(id_, absl::StrCat("malformed masked request for item ", it.item));
    }
    if (!s3) {
      RETURN_IF_ERROR(StoreEta(it, pos[k]));
    }
    std::vector<double> x = Gradient(it, pos[k]);
    // Only the SUM of the k' pieces must be eps-DP (the third party hides
    // each one), so each piece is a 1/sqrt(k') share of one Laplace vector.
    const std::vector<double> rho =
        LaplacePiece(it.h_rho, RhoZ(req.iteration, pos[k]), it.rho_users, laplace_b_);
    for (int32_t l = 0; l < params_.dim; ++l) x[l] += rho[l] + (s3 ? 0.0 : eta_[pos[k]][l]);
    ASSIGN_OR_RETURN(auto phi, codec_->Encode(x));
    ZpCodec::Add(phi, it.mask);
    out.items.push_back({it.item, std::move(phi), it.rho_users});
  }
  StepProfile(req, pos);
  return out;
}

}  // namespace fedmf::hua
