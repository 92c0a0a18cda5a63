// S3's world: which users are online. Between iterations an offline user
// comes online with probability `join` and an online one leaves with `leave`
// (the paper: 0.005 and 0.01); each iteration the recommender works with at
// most K of the online users, picked uniformly at random.
#ifndef FEDMF_COMMON_HUA_DYNAMICS_H_
#define FEDMF_COMMON_HUA_DYNAMICS_H_

#include <cstdint>
#include <vector>

#include "common/random/csprng.h"

namespace fedmf::hua {

class OnlinePool {
 public:
  // `users`: the ids that exist; each starts online with probability
  // `initial_online`.
  OnlinePool(std::vector<int32_t> users, double initial_online, double join, double leave,
             random::Csprng rng);

  // One join/leave step for every user.
  void Step();
  // A user disconnects now (e.g. mid-iteration); it may join again later.
  void Disconnect(int32_t user);
  // Online users, sorted.
  std::vector<int32_t> Online() const;
  // At most k online users, uniformly without replacement, sorted.
  std::vector<int32_t> Select(int32_t k);

 private:
  std::vector<int32_t> users_;
  std::vector<bool> online_;  // parallel to users_
  double join_;
  double leave_;
  random::Csprng rng_;
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_DYNAMICS_H_
