#include "common/hua/protocol_driver.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "common/base/status_macros.h"
#include "common/hua/dynamics.h"
#include "common/hua/recommender.h"
#include "common/hua/streams.h"
#include "common/hua/third_party.h"
#include "common/hua/user.h"
#include "common/hua/zp_codec.h"

namespace fedmf::hua {
namespace {

// Wall time spent inside the third party's calls.
class Stopwatch {
 public:
  template <typename F>
  auto Time(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    auto result = f();
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  double seconds() const { return seconds_; }

 private:
  double seconds_ = 0;
};

// Per-(user, iteration) byte counts, folded into TrafficStats.
class TrafficMeter {
 public:
  explicit TrafficMeter(const mf::RatingMatrix& x)
      : x_(x), down_(x.num_users()), up_(x.num_users()) {}
  void Down(int32_t user, int64_t bytes) {
    Touch(user);
    down_[user] += bytes;
  }
  void Up(int32_t user, int64_t bytes) {
    Touch(user);
    up_[user] += bytes;
  }
  void EndIteration() {
    for (int32_t i : touched_) {
      total_down_ += down_[i];
      total_up_ += up_[i];
      if (x_.RowSize(i) <= 20) {
        stats_.max_down_le20 = std::max(stats_.max_down_le20, down_[i]);
        stats_.max_up_le20 = std::max(stats_.max_up_le20, up_[i]);
      }
      down_[i] = up_[i] = 0;
    }
    participations_ += static_cast<int64_t>(touched_.size());
    touched_.clear();
  }
  TrafficStats& stats() { return stats_; }
  TrafficStats Finish(int32_t iterations) {
    if (participations_ > 0) {
      stats_.down_per_user = static_cast<double>(total_down_) / participations_;
      stats_.up_per_user = static_cast<double>(total_up_) / participations_;
    }
    stats_.plan_per_iteration /= iterations;
    stats_.forward_per_iteration /= iterations;
    return stats_;
  }
  int64_t participations() const { return participations_; }

 private:
  void Touch(int32_t user) {
    if (down_[user] == 0 && up_[user] == 0) touched_.push_back(user);
  }
  const mf::RatingMatrix& x_;
  std::vector<int64_t> down_, up_;
  std::vector<int32_t> touched_;
  int64_t total_down_ = 0, total_up_ = 0, participations_ = 0;
  TrafficStats stats_;
};

class Driver {
 public:
  Driver(const HuaParams& p, const mf::RatingMatrix& x, const data::RatingRange& range,
         const random::Csprng& root)
      : p_(p), x_(x), range_(range), root_(root), meter_(x) {}

  absl::StatusOr<DriverOutput> Run(const Profiles& start, const IterationFn& on_iteration,
                                   int32_t eval_every);

 private:
  absl::Status Setup();
  absl::Status InitRoundS3();
  absl::Status DirectIteration(const std::vector<int32_t>& participants);
  absl::Status MaskedIteration(const std::vector<int32_t>& participants);
  Profiles Snapshot(const Profiles& start) const;

  HuaParams p_;
  const mf::RatingMatrix& x_;
  data::RatingRange range_;
  const random::Csprng& root_;
  TrafficMeter meter_;
  std::optional<ZpCodec> codec_;
  std::optional<Recommender> server_;
  std::optional<ThirdParty> tp_;
  std::vector<std::optional<User>> users_;  // by user id; empty for users without ratings
  std::vector<int32_t> active_users_;
  std::optional<OnlinePool> pool_;
  std::optional<random::Csprng> dynamics_;
  Stopwatch tp_clock_;
  int64_t dropped_ = 0;
  int64_t abandoned_ = 0;
};

absl::Status Driver::Setup() {
  const bool masked = p_.scenario != Scenario::kUntrusted;
  if (masked) {
    ASSIGN_OR_RETURN(auto codec, ZpCodec::Create(p_.zp));
    codec_.emplace(codec);
    ASSIGN_OR_RETURN(auto tp, ThirdParty::Create(p_.scenario, p_.dim, ThirdPartyStream(root_)));
    tp_.emplace(std::move(tp));
  }
  const ZpCodec* codec = codec_ ? &*codec_ : nullptr;
  ASSIGN_OR_RETURN(auto server, Recommender::Create(p_, x_.num_items(), range_, codec,
                                                    RecommenderStream(root_)));
  server_.emplace(std::move(server));
  users_.resize(x_.num_users());
  for (int32_t i = 0; i < x_.num_users(); ++i) {
    if (x_.RowSize(i) == 0) continue;
    std::vector<RatedItem> ratings;
    for (const auto& e : x_.Row(i)) ratings.push_back({e.item, e.value});
    ASSIGN_OR_RETURN(auto user,
                     User::Create(i, std::move(ratings), p_, range_, codec, UserStream(root_, i)));
    RETURN_IF_ERROR(server_->Register(user.Hello()));
    users_[i].emplace(std::move(user));
    active_users_.push_back(i);
  }
  if (p_.scenario == Scenario::kDynamic) {
    const double initial = p_.initial_online >= 0 ? p_.initial_online
                           : p_.join_prob + p_.leave_prob > 0
                               ? p_.join_prob / (p_.join_prob + p_.leave_prob)
                               : 1.0;
    dynamics_.emplace(DynamicsStream(root_));
    pool_.emplace(active_users_, initial, p_.join_prob, p_.leave_prob, dynamics_->Fork("pool"));
  }
  return absl::OkStatus();
}

absl::Status Driver::InitRoundS3() {
  if (server_->uninitialized_items() == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto round, server_->StartInit(pool_->Online()));
  if (round.requests.empty()) return absl::OkStatus();
  TrafficStats& t = meter_.stats();
  t.init_bytes += EncodedBytes(round.plan);
  RETURN_IF_ERROR(tp_clock_.Time([&] { return tp_->Begin(round.plan); }));
  for (const InitRequest& req : round.requests) {
    t.init_bytes += EncodedBytes(req);
    ASSIGN_OR_RETURN(auto report, users_[req.user]->HandleInit(req));
    t.init_bytes += EncodedBytes(report);
    RETURN_IF_ERROR(tp_clock_.Time([&] { return tp_->Accept(report); }));
  }
  ASSIGN_OR_RETURN(auto forward, tp_clock_.Time([&] { return tp_->Flush(); }));
  t.init_bytes += EncodedBytes(forward);
  return server_->FinishInit(forward);
}

absl::Status Driver::DirectIteration(const std::vector<int32_t>& participants) {
  ASSIGN_OR_RETURN(auto round, server_->StartIteration(participants));
  for (const IterationRequest& req : round.requests) {
    meter_.Down(req.user, EncodedBytes(req));
    ASSIGN_OR_RETURN(auto report, users_[req.user]->HandleDirect(req));
    meter_.Up(req.user, EncodedBytes(report));
    RETURN_IF_ERROR(server_->AcceptDirect(report));
  }
  return server_->FinishIteration().status();
}

absl::Status Driver::MaskedIteration(const std::vector<int32_t>& participants) {
  auto round = server_->StartIteration(participants);
  if (!round.ok()) return round.status();
  TrafficStats& t = meter_.stats();
  while (true) {
    t.plan_per_iteration += EncodedBytes(round->plan);
    RETURN_IF_ERROR(tp_clock_.Time([&] { return tp_->Begin(round->plan); }));
    for (const IterationRequest& req : round->requests) {
      meter_.Down(req.user, EncodedBytes(req));
      // Disconnects only after downloading, in the first pass, so the
      // recommender has already handed out the user's masks and shares.
      if (req.pass == 0 && p_.dropout_prob > 0 && dynamics_->Bernoulli(p_.dropout_prob)) {
        pool_->Disconnect(req.user);
        ++dropped_;
        continue;
      }
      ASSIGN_OR_RETURN(auto report, users_[req.user]->HandleMasked(req));
      meter_.Up(req.user, EncodedBytes(report));
      RETURN_IF_ERROR(tp_clock_.Time([&] { return tp_->Accept(report); }));
    }
    ASSIGN_OR_RETURN(auto forward, tp_clock_.Time([&] { return tp_->Flush(); }));
    t.forward_per_iteration += EncodedBytes(forward);
    round = server_->AcceptForward(forward);
    if (!round.ok()) return round.status();
    if (round->requests.empty()) break;
  }
  ASSIGN_OR_RETURN(auto stats, server_->FinishIteration());
  abandoned_ += stats.items_abandoned;
  return absl::OkStatus();
}

Profiles Driver::Snapshot(const Profiles& start) const {
  Profiles out{start.u, server_->item_profiles(), {}};
  if (!p_.paper_noise) out.bias.assign(start.u.rows(), (range_.min + range_.max) / 2);
  for (int32_t i : active_users_) {
    std::span<const double> u = users_[i]->profile();
    std::copy(u.begin(), u.end(), out.u.row(i).data());
    if (!users_[i]->uses_model()) out.u.row(i).setZero();  // b_i alone
    if (!out.bias.empty()) out.bias[i] = users_[i]->bias();
  }
  return out;
}

absl::StatusOr<DriverOutput> Driver::Run(const Profiles& start, const IterationFn& on_iteration,
                                         int32_t eval_every) {
  RETURN_IF_ERROR(Setup());
  int64_t users_total = 0;
  for (int32_t t = 1; t <= p_.iterations; ++t) {
    std::vector<int32_t> participants = active_users_;
    if (p_.scenario == Scenario::kDynamic) {
      if (t > 1) pool_->Step();  // users join and leave between iterations
      RETURN_IF_ERROR(InitRoundS3());
      participants = pool_->Select(p_.max_online);
    }
    users_total += static_cast<int64_t>(participants.size());
    absl::Status s = p_.scenario == Scenario::kUntrusted ? DirectIteration(participants)
                                                         : MaskedIteration(participants);
    if (!s.ok()) return s;
    meter_.EndIteration();
    if (on_iteration) {
      const bool eval = eval_every > 0 && (t % eval_every == 0 || t == p_.iterations);
      std::optional<Profiles> snap;
      if (eval) snap = Snapshot(start);
      on_iteration(t, static_cast<int32_t>(participants.size()), snap ? &*snap : nullptr);
    }
  }
  DriverOutput out;
  if (!p_.paper_noise) {
    // Every user's own choice, on her held-out ratings: the model or her mean.
    for (int32_t i : active_users_) {
      RETURN_IF_ERROR(users_[i]->ChooseModel(server_->item_profiles()));
      out.users_on_mean += users_[i]->uses_model() ? 0 : 1;
    }
  }
  out.profiles = Snapshot(start);
  out.user_releases.assign(x_.num_users(), 0);
  out.user_ratings.assign(x_.num_users(), 0);
  for (int32_t i : active_users_) {
    out.user_releases[i] = users_[i]->releases();
    out.user_ratings[i] = users_[i]->num_ratings();
  }
  out.traffic = meter_.Finish(p_.iterations);
  out.third_party_seconds = tp_clock_.seconds();
  out.mean_users_per_iteration = static_cast<double>(users_total) / p_.iterations;
  out.dropped_users = dropped_;
  out.abandoned_item_updates = abandoned_;
  return out;
}

}  // namespace

absl::StatusOr<DriverOutput> RunProtocol(const HuaParams& params, const mf::RatingMatrix& by_user,
                                         const data::RatingRange& range, const random::Csprng& root,
                                         const Profiles& start, const IterationFn& on_iteration,
                                         int32_t eval_every) {
  RETURN_IF_ERROR(ValidateHuaParams(params));
  if (params.scenario == Scenario::kTrusted) {
    return absl::InvalidArgumentError("S1 runs centrally (TrainTrustedItems)");
  }
  Driver driver(params, by_user, range, root);
  return driver.Run(start, on_iteration, eval_every);
}

}  // namespace fedmf::hua
