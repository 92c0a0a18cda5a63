// Federations of partners that each bring their own ratings file, joined by
// external ids, never by position in a file:
//  - HFL shares items: every party maps its item ids into the public item
//    catalogue (common/data/catalogue.h); its users stay its own.
//  - VFL shares users: the parties agree on the shared users and their order
//    by a private set intersection (common/psi) and pass its output here; each
//    party's items stay its own.
// Each party's own entities are numbered in the order of their external ids
// and its ratings are put in that canonical order before the seeded
// train/test split, so the rows' order in a file changes nothing.
#ifndef FEDMF_COMMON_DATA_PARTY_FILES_H_
#define FEDMF_COMMON_DATA_PARTY_FILES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/catalogue.h"
#include "common/data/partition.h"
#include "common/data/ratings.h"

namespace fedmf::data {

struct PartyFilesFederation {
  Federation federation;
  // HFL: the catalogue's size; VFL: the intersection's.
  int32_t shared = 0;
  // Per party: its own entities kept (HFL users, VFL items) and the ratings
  // it could not place (HFL: item not in the catalogue; VFL: user not shared).
  std::vector<int32_t> own_entities;
  std::vector<int64_t> dropped_ratings;
  // Per party: the index in its Dataset::ratings (file order) of the first
  // rating it could not place, -1 if none (RatingLocation gives its line).
  std::vector<int64_t> first_dropped_row;
  // The federation's global index -> the external id as written in the
  // owner's file (HFL users and VFL items of different parties may share an
  // id: they are still different entities).
  std::vector<std::string> user_ids;
  std::vector<std::string> item_ids;
};

// HFL. parties[k] is party k's own file as loaded (its ids as written); all
// must declare the same rating range. Users of different parties are
// different people even when their ids are equal.
absl::StatusOr<PartyFilesFederation> FederateByItemCatalogue(const std::vector<Dataset>& parties,
                                                             const Catalogue& catalogue,
                                                             const SplitOptions& split);

// VFL. shared_users[k] is the shared users as party k names them, in the
// canonical order every party got from the PSI (row u of the shared U is
// shared_users[k][u] at every k).
absl::StatusOr<PartyFilesFederation> FederateBySharedUsers(
    const std::vector<Dataset>& parties, const std::vector<std::vector<std::string>>& shared_users,
    const SplitOptions& split);

// "<source>: N of its M ratings are left out (<why>); the first is
// <file>:<line>" for parties[k] of `fed`, or "" when it lost none (no id is
// named: logs are shipped). One wording for `fedmf train/demo`'s warning and
// fedmf-party's log.
std::string DroppedRatingsMessage(const Dataset& party, const PartyFilesFederation& fed, size_t k,
                                  std::string_view why);

// The distinct user ids of a file (the PSI's input), sorted.
std::vector<std::string> DistinctUserIds(const Dataset& dataset);
// The sorted union of the item ids of several files: the catalogue of an
// in-process federation whose parties publish nothing else.
std::vector<std::string> ItemIdUnion(const std::vector<Dataset>& parties);

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_PARTY_FILES_H_
