// Runs S2, S2-TP or S3 in one process: one Recommender, one User per user
// with ratings, the ThirdParty (S2-TP, S3), exchanging the messages the
// daemons carry, and counts their encoded sizes.
#ifndef FEDMF_COMMON_HUA_PROTOCOL_DRIVER_H_
#define FEDMF_COMMON_HUA_PROTOCOL_DRIVER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/central.h"
#include "common/hua/params.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

// Per-iteration bytes. "Per user" = per (user, iteration) in which the user
// took part, all passes of the iteration included.
struct TrafficStats {
  double down_per_user = 0;  // recommender -> user
  double up_per_user = 0;    // user -> third party (S2-TP, S3) or recommender (S2)
  // The largest per-iteration figures of a user with <= 20 ratings (the
  // paper's "<= 12 KB down, <= 5 KB up").
  int64_t max_down_le20 = 0;
  int64_t max_up_le20 = 0;
  double plan_per_iteration = 0;     // recommender -> third party
  double forward_per_iteration = 0;  // third party -> recommender
  int64_t init_bytes = 0;            // all messages of S3 initialization rounds
};

struct DriverOutput {
  // U as the users hold it (users without ratings keep U(0)), V; the valid
  // variant also the users' b_i.
  Profiles profiles;
  // Per user id: iterations in which the user computed a report (her own
  // count, pass 0; 0 for users without ratings), and the ratings she took
  // part with (valid variant: at most theta).
  std::vector<int32_t> user_releases;
  std::vector<int32_t> user_ratings;
  // Valid variant: users who kept their mean (ChooseModel) over the model.
  int64_t users_on_mean = 0;
  TrafficStats traffic;
  double third_party_seconds = 0;  // inside ThirdParty calls, all rounds
  double mean_users_per_iteration = 0;
  int64_t dropped_users = 0;  // mid-iteration disconnects (S3)
  int64_t abandoned_item_updates = 0;
};

// Called after iteration t; `snapshot` is non-null every `eval_every` iterations.
using IterationFn = std::function<void(int32_t t, int32_t users, const Profiles* snapshot)>;

// `start` must come from InitialProfiles(root, ...) (the roles redraw it from
// their streams; only rows of users without ratings are taken from it).
absl::StatusOr<DriverOutput> RunProtocol(const HuaParams& params, const mf::RatingMatrix& by_user,
                                         const data::RatingRange& range, const random::Csprng& root,
                                         const Profiles& start,
                                         const IterationFn& on_iteration = nullptr,
                                         int32_t eval_every = 0);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_PROTOCOL_DRIVER_H_
