#include "common/fmf/gain.h"

#include <algorithm>
#include <cmath>

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
  all.global_users = data::IndexMap::Identity(federation.num_users);
  all.global_items = data::IndexMap::Identity(federation.num_items);
  for (const data::PartyData& p : federation.parties) {
    for (auto [in, out] : {std::pair{&p.train, &all.train}, std::pair{&p.test, &all.test}}) {
      ASSIGN_OR_RETURN(std::vector<data::Rating> global,
                       data::ToGlobalIndices(p, *in, pooled.num_users, pooled.num_items));
      out->insert(out->end(), global.begin(), global.end());
    }
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
