// The recommender (coordination server) of Hua et al. section 4.2-4.3 in S2,
// S2-TP and S3: holds V, never sees a rating or a u_i. It draws H_j and
// H~_j(t), the masks psi (S2-TP, S3) and beta (S3 initialization), keeps
// tau^_j = alpha_j + sum eta^{i_s} (S3) and splits it among each iteration's
// users.
//
// One iteration:  StartIteration -> users -> (S2) AcceptDirect per user
//                                          | (TP) third party -> AcceptForward
//                 [AcceptForward returns a repair round when the third party
//                  withheld sums because users vanished mid-iteration: their
//                  items are re-planned among the remaining users, with fresh
//                  masks and tau^ shares, and the iteration goes on]
//                 -> FinishIteration (applies v_j(t) for every complete sum).
// S3 initialization: StartInit -> users -> third party -> FinishInit; items
// whose sums were withheld stay uninitialized and are retried next time.
//
// The valid variant (params.paper_noise false): no H_j, H~_j(t), eta_j or
// tau^_j (S3 has no initialization rounds); the reports carry Gaussian
// shares (user.h), v_j is projected onto ||v_j|| <= sqrt(R) after each step
// (the honest recommender's choice; users project it themselves anyway),
// and the recommender counts, per user, the iterations in which one of her
// reports reached a decoded sum (S2: her report): her releases, whose
// epsilon it reports (accounting.h UserEpsilon).
#ifndef FEDMF_COMMON_HUA_RECOMMENDER_H_
#define FEDMF_COMMON_HUA_RECOMMENDER_H_

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "common/hua/zp_codec.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

struct Round {
  std::vector<IterationRequest> requests;  // one per user, by user id
  AggregationPlan plan;                    // for the third party (S2-TP, S3)
};

struct InitRound {
  std::vector<InitRequest> requests;
  AggregationPlan plan;
};

struct IterationStats {
  int32_t iteration = 0;
  int32_t items_updated = 0;
  int32_t items_abandoned = 0;  // every planned user of the item vanished
  int32_t passes = 0;
  int32_t dropped_users = 0;
};

class Recommender {
 public:
  // `codec` (S2-TP, S3) must outlive the recommender. V(0) is drawn from
  // rng.Fork("init") as central.h's InitialProfiles does.
  static absl::StatusOr<Recommender> Create(const HuaParams& params, int32_t num_items,
                                            const data::RatingRange& range, const ZpCodec* codec,
                                            random::Csprng rng);

  absl::Status Register(const UserHello& hello);

  // S3: an initialization round for every item without tau^_j that one of
  // the `online` users rated (all of its online raters share eta_j).
  // An empty round (no requests) if there is nothing to initialize.
  absl::StatusOr<InitRound> StartInit(const std::vector<int32_t>& online);
  absl::Status FinishInit(const AggregateForward& forward);

  // Iteration t = iteration() + 1 with `participants` (S2, S2-TP: every user).
  absl::StatusOr<Round> StartIteration(const std::vector<int32_t>& participants);
  // S2: one user's grad + eta^{i_s} + rho(t).
  absl::Status AcceptDirect(const DirectReport& report);
  // S2-TP, S3: unmasks and decodes the complete sums; returns the repair
  // round for withheld ones (no requests when there is nothing to repair).
  absl::StatusOr<Round> AcceptForward(const AggregateForward& forward);
  absl::StatusOr<IterationStats> FinishIteration();

  const mf::Matrix& item_profiles() const { return v_; }
  int32_t iteration() const { return t_; }
  bool initialized(int32_t item) const { return !eta_pads() || tau_.count(item) > 0; }
  // The decoded (noisy) sum of item j in the open iteration, once its
  // forward arrived; null otherwise. What the recommender legitimately learns.
  const std::vector<double>* decoded_sum(int32_t item) const;
  // S3: tau^_j = alpha_j + sum encode(eta^{i_s}) (mod 2^64); null before init.
  const std::vector<uint64_t>* tau_hat(int32_t item) const;
  // Items that someone rated and that are still waiting for their eta_j (S3;
  // always 0 in the valid variant).
  int32_t uninitialized_items() const;
  // Iterations in which a report of `user` was decoded (valid variant).
  int32_t releases(int32_t user) const;
  // The registered users, ascending.
  std::vector<int32_t> registered_users() const;

 private:
  Recommender(const HuaParams& params, int32_t num_items, const data::RatingRange& range,
              const ZpCodec* codec, random::Csprng rng);

  bool masked() const { return params_.scenario != Scenario::kUntrusted; }
  bool gaussian() const { return !params_.paper_noise; }
  // S3 with the paper's mechanism: eta_j through tau^_j and alpha_j.
  bool eta_pads() const { return params_.scenario == Scenario::kDynamic && !gaussian(); }
  // Requests for the (item -> users) plan of the current pass.
  Round BuildPass(const std::map<int32_t, std::vector<int32_t>>& plan);

  struct ItemState {
    std::vector<int32_t> users;     // planned in the current pass
    std::vector<uint64_t> psi_sum;  // their masks psi
    bool done = false;
    std::vector<double> sum;  // decoded sum (done)
    int32_t count = 0;
  };
  struct InitState {
    int32_t users = 0;
    std::vector<uint64_t> beta_sum;
  };

  HuaParams params_;
  data::RatingRange range_;
  const ZpCodec* codec_;
  random::Csprng rng_;
  mf::Matrix v_;
  mf::Matrix h_;                                  // H_j
  mf::Matrix h_rho_;                              // H~_j(t)
  std::vector<std::vector<int32_t>> raters_;      // per item
  std::vector<std::vector<int32_t>> user_items_;  // per user id
  std::vector<bool> registered_;
  std::vector<bool> h_sent_;
  // S3
  std::map<int32_t, std::vector<uint64_t>> tau_;
  std::vector<int32_t> init_users_;
  int32_t init_round_ = 0;
  std::map<int32_t, InitState> init_pending_;
  bool init_open_ = false;
  // The open iteration.
  int32_t t_ = 0;
  int32_t pass_ = 0;
  bool open_ = false;
  std::set<int32_t> participants_;
  std::set<int32_t> reported_;  // S2
  std::set<int32_t> dropped_;
  std::map<int32_t, ItemState> active_;
  mf::Matrix direct_sum_;  // S2
  std::vector<int32_t> direct_count_;
  int32_t abandoned_ = 0;
  // Valid variant: releases per user id, and the users whose reports were
  // decoded in the open iteration.
  std::vector<int32_t> releases_;
  std::set<int32_t> released_now_;
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_RECOMMENDER_H_
