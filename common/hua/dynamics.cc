#include "common/hua/dynamics.h"

#include <algorithm>
#include <utility>

namespace fedmf::hua {

OnlinePool::OnlinePool(std::vector<int32_t> users, double initial_online, double join, double leave,
                       random::Csprng rng)
    : users_(std::move(users)), join_(join), leave_(leave), rng_(std::move(rng)) {
  std::sort(users_.begin(), users_.end());
  online_.resize(users_.size());
  for (size_t k = 0; k < users_.size(); ++k) online_[k] = rng_.Bernoulli(initial_online);
}

void OnlinePool::Step() {
  for (size_t k = 0; k < users_.size(); ++k) {
    online_[k] = online_[k] ? !rng_.Bernoulli(leave_) : rng_.Bernoulli(join_);
  }
}

void OnlinePool::Disconnect(int32_t user) {
  auto it = std::lower_bound(users_.begin(), users_.end(), user);
  if (it != users_.end() && *it == user) online_[it - users_.begin()] = false;
}

std::vector<int32_t> OnlinePool::Online() const {
  std::vector<int32_t> out;
  for (size_t k = 0; k < users_.size(); ++k) {
    if (online_[k]) out.push_back(users_[k]);
  }
  return out;
}

std::vector<int32_t> OnlinePool::Select(int32_t k) {
  std::vector<int32_t> online = Online();
  if (static_cast<int32_t>(online.size()) > k) {
    // Partial Fisher-Yates: the first k are a uniform sample.
    for (int32_t s = 0; s < k; ++s) {
      const auto r = s + static_cast<int32_t>(rng_.UniformInt(online.size() - s));
      std::swap(online[s], online[r]);
    }
    online.resize(k);
    std::sort(online.begin(), online.end());
  }
  return online;
}

}  // namespace fedmf::hua
