#include "common/fmf/gain.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::fmf {

std::optional<double> GainCaptured(double mse_local, double mse_federated, double mse_central) {
  if (!std::isfinite(mse_local) || !std::isfinite(mse_federated) || !std::isfinite(mse_central)) {
    return std::nullopt;
  }
  const double room = mse_local - mse_central;
  if (!(room > 0)) return std::nullopt;
  return (mse_local - mse_federated) / room;
}

absl::StatusOr<data::Federation> PoolFederation(const data::Federation& federation) {
  if (federation.parties.empty()) return absl::InvalidArgumentError("federation has no parties");
  data::Federation pooled;
  pooled.num_users = federation.num_users;
  pooled.num_items = federation.num_items;
  pooled.range = federation.range;
  data::PartyData all;
  all.party = 0;
  all.range = federation.range;
  all.global_users.resize(static_cast<size_t>(federation.num_users));
  all.global_items.resize(static_cast<size_t>(federation.num_items));
  std::iota(all.global_users.begin(), all.global_users.end(), 0);
  std::iota(all.global_items.begin(), all.global_items.end(), 0);
  for (const data::PartyData& p : federation.parties) {
    auto map = [&](const std::vector<data::Rating>& in,
                   std::vector<data::Rating>& out) -> absl::Status {
      for (data::Rating r : in) {
        if (r.user < 0 || r.user >= p.num_users() || r.item < 0 || r.item >= p.num_items()) {
          return absl::InvalidArgumentError(
              absl::StrCat("party ", p.party, " has a rating outside its index space"));
        }
        r.user = p.global_users[static_cast<size_t>(r.user)];
        r.item = p.global_items[static_cast<size_t>(r.item)];
        if (r.user < 0 || r.user >= pooled.num_users || r.item < 0 || r.item >= pooled.num_items) {
          return absl::InvalidArgumentError(
              absl::StrCat("party ", p.party, " maps a rating outside the global index space"));
        }
        out.push_back(r);
      }
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(map(p.train, all.train));
    RETURN_IF_ERROR(map(p.test, all.test));
  }
  auto by_key = [](const data::Rating& a, const data::Rating& b) {
    return a.user != b.user ? a.user < b.user : a.item < b.item;
  };
  std::sort(all.train.begin(), all.train.end(), by_key);
  std::sort(all.test.begin(), all.test.end(), by_key);
  pooled.parties.push_back(std::move(all));
  return pooled;
}

}  // namespace fedmf::fmf
