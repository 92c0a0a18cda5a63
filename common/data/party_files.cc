#include "common/data/party_files.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::data {
namespace {

absl::Status CheckSameRange(const std::vector<Dataset>& parties) {
  if (parties.empty()) return absl::InvalidArgumentError("no party files");
  for (size_t k = 1; k < parties.size(); ++k) {
    if (parties[k].range.min != parties[0].range.min ||
        parties[k].range.max != parties[0].range.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "party ", k, " (", parties[k].source, ") declares ratings in [", parties[k].range.min,
          ", ", parties[k].range.max, "] but party 0 (", parties[0].source, ") in [",
          parties[0].range.min, ", ", parties[0].range.max,
          "]: a federation trains on one scale; declare the same --rating-range"));
    }
  }
  return absl::OkStatus();
}

// Local index of each of the file's own entities, by external id order.
std::vector<int32_t> RankByExternalId(const std::vector<std::string>& ids) {
  std::vector<int32_t> order(ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return ids[a] < ids[b]; });
  std::vector<int32_t> rank(ids.size());
  for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = static_cast<int32_t>(r);
  return rank;
}

bool ByUserItem(const Rating& a, const Rating& b) {
  return a.user != b.user ? a.user < b.user : a.item < b.item;
}

}  // namespace

std::string DroppedRatingsMessage(const Dataset& party, const PartyFilesFederation& fed, size_t k,
                                  std::string_view why) {
  if (k >= fed.dropped_ratings.size() || fed.dropped_ratings[k] == 0) return "";
  std::string out =
      absl::StrCat(party.source, ": ", fed.dropped_ratings[k], " of its ", party.ratings.size(),
                   " ratings are left out (", absl::string_view(why.data(), why.size()), ")");
  const int64_t row = fed.first_dropped_row[k];
  if (row >= 0 && static_cast<size_t>(row) < party.ratings.size()) {
    // Only where: ids (e-mail addresses, say) stay out of logs.
    absl::StrAppend(&out, "; the first is ", RatingLocation(party, static_cast<size_t>(row)));
  }
  return out;
}

std::vector<std::string> DistinctUserIds(const Dataset& dataset) {
  std::vector<std::string> ids = dataset.user_ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<std::string> ItemIdUnion(const std::vector<Dataset>& parties) {
  std::vector<std::string> ids;
  for (const Dataset& d : parties) ids.insert(ids.end(), d.item_ids.begin(), d.item_ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

absl::StatusOr<PartyFilesFederation> FederateByItemCatalogue(const std::vector<Dataset>& parties,
                                                             const Catalogue& catalogue,
                                                             const SplitOptions& split) {
  RETURN_IF_ERROR(CheckSameRange(parties));
  PartyFilesFederation out;
  out.shared = catalogue.size();
  // One dataset over all parties: users numbered party by party, each party's
  // by its external ids; items are catalogue positions.
  Dataset all;
  all.range = parties[0].range;
  all.num_items = catalogue.size();
  all.item_ids = catalogue.ids();
  std::vector<int32_t> owner;
  for (size_t k = 0; k < parties.size(); ++k) {
    const Dataset& d = parties[k];
    const int32_t offset = all.num_users;
    const std::vector<int32_t> rank = RankByExternalId(d.user_ids);
    std::vector<std::optional<int32_t>> item_to_catalogue(d.item_ids.size());
    for (size_t i = 0; i < d.item_ids.size(); ++i)
      item_to_catalogue[i] = catalogue.Find(d.item_ids[i]);
    std::vector<bool> has_rating(d.user_ids.size(), false);
    int64_t dropped = 0, first_dropped = -1;
    const size_t first = all.ratings.size();
    for (size_t row = 0; row < d.ratings.size(); ++row) {
      const Rating& r = d.ratings[row];
      const std::optional<int32_t> item = item_to_catalogue[r.item];
      if (!item.has_value()) {
        if (dropped++ == 0) first_dropped = static_cast<int64_t>(row);
        continue;
      }
      has_rating[r.user] = true;
      all.ratings.push_back({offset + rank[r.user], *item, r.value});
    }
    // A user whose every item is outside the catalogue keeps no rating; it is
    // still numbered (harmless: an empty row), so ranks stay contiguous.
    std::sort(all.ratings.begin() + static_cast<std::ptrdiff_t>(first), all.ratings.end(),
              ByUserItem);
    std::vector<std::string> names(d.user_ids.size());
    for (size_t u = 0; u < d.user_ids.size(); ++u) {
      names[rank[u]] = d.user_ids[u];
    }
    all.user_ids.insert(all.user_ids.end(), names.begin(), names.end());
    all.num_users += static_cast<int32_t>(d.user_ids.size());
    owner.insert(owner.end(), d.user_ids.size(), static_cast<int32_t>(k));
    if (first == all.ratings.size()) {
      // Named by its file: in a daemon, "party 0" would be no one's name.
      return absl::InvalidArgumentError(absl::StrCat(
          d.source, ": none of its ", d.item_ids.size(), " item ids is in the catalogue ",
          catalogue.source(), " (e.g. '", d.item_ids.empty() ? "" : d.item_ids[0], "' on ",
          d.ratings.empty() ? d.source : RatingLocation(d, 0), "; the catalogue's first is '",
          catalogue.ids().empty() ? "" : catalogue.ids()[0],
          "'): the file uses another item-id scheme than the federation; map your item ids to "
          "the catalogue's"));
    }
    out.own_entities.push_back(static_cast<int32_t>(d.user_ids.size()));
    out.dropped_ratings.push_back(dropped);
    out.first_dropped_row.push_back(first_dropped);
  }
  all.source = "party files by item catalogue";
  out.user_ids = all.user_ids;
  out.item_ids = all.item_ids;
  auto fed = PartitionByOwner(all, OwnedAxis::kUsers, std::move(owner),
                              static_cast<int32_t>(parties.size()), split);
  if (!fed.ok()) return fed.status();
  out.federation = std::move(*fed);
  return out;
}

absl::StatusOr<PartyFilesFederation> FederateBySharedUsers(
    const std::vector<Dataset>& parties, const std::vector<std::vector<std::string>>& shared_users,
    const SplitOptions& split) {
  RETURN_IF_ERROR(CheckSameRange(parties));
  if (shared_users.size() != parties.size()) {
    return absl::InvalidArgumentError("one list of shared users per party is needed");
  }
  const size_t n = shared_users[0].size();
  for (const auto& list : shared_users) {
    if (list.size() != n) {
      return absl::InvalidArgumentError("the parties' shared-user lists differ in length");
    }
  }
  if (n == 0) {
    return absl::InvalidArgumentError(
        "the parties share no user: a VFL federation needs a common user (check the id format)");
  }
  PartyFilesFederation out;
  out.shared = static_cast<int32_t>(n);
  Dataset all;
  all.range = parties[0].range;
  all.num_users = static_cast<int32_t>(n);
  all.user_ids = shared_users[0];
  std::vector<int32_t> owner;
  for (size_t k = 0; k < parties.size(); ++k) {
    const Dataset& d = parties[k];
    absl::flat_hash_map<absl::string_view, int32_t> row;
    for (size_t u = 0; u < n; ++u) row.emplace(shared_users[k][u], static_cast<int32_t>(u));
    std::vector<int32_t> user_row(d.user_ids.size(), -1);
    for (size_t u = 0; u < d.user_ids.size(); ++u) {
      if (auto it = row.find(d.user_ids[u]); it != row.end()) user_row[u] = it->second;
    }
    if (row.size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat(d.source, ": its list of shared users repeats an id"));
    }
    const int32_t offset = all.num_items;
    const std::vector<int32_t> rank = RankByExternalId(d.item_ids);
    int64_t dropped = 0, first_dropped = -1;
    const size_t first = all.ratings.size();
    for (size_t row = 0; row < d.ratings.size(); ++row) {
      const Rating& r = d.ratings[row];
      if (user_row[r.user] < 0) {
        if (dropped++ == 0) first_dropped = static_cast<int64_t>(row);
        continue;
      }
      all.ratings.push_back({user_row[r.user], offset + rank[r.item], r.value});
    }
    std::sort(all.ratings.begin() + static_cast<std::ptrdiff_t>(first), all.ratings.end(),
              ByUserItem);
    std::vector<std::string> names(d.item_ids.size());
    for (size_t i = 0; i < d.item_ids.size(); ++i) {
      names[rank[i]] = d.item_ids[i];
    }
    all.item_ids.insert(all.item_ids.end(), names.begin(), names.end());
    all.num_items += static_cast<int32_t>(d.item_ids.size());
    owner.insert(owner.end(), d.item_ids.size(), static_cast<int32_t>(k));
    out.own_entities.push_back(static_cast<int32_t>(d.item_ids.size()));
    out.dropped_ratings.push_back(dropped);
    out.first_dropped_row.push_back(first_dropped);
  }
  // PartitionByOwner buckets ratings per party in dataset order: the order
  // above (party by party, canonical within each).
  all.source = "party files by private set intersection";
  out.user_ids = all.user_ids;
  out.item_ids = all.item_ids;
  auto fed = PartitionByOwner(all, OwnedAxis::kItems, std::move(owner),
                              static_cast<int32_t>(parties.size()), split);
  if (!fed.ok()) return fed.status();
  out.federation = std::move(*fed);
  return out;
}

}  // namespace fedmf::data
