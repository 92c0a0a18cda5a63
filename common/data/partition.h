// Splitting a dataset across parties (VFL / HFL / LFL) and into train/test.
#ifndef FEDMF_COMMON_DATA_PARTITION_H_
#define FEDMF_COMMON_DATA_PARTITION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/index_map.h"
#include "common/data/ratings.h"
#include "common/random/csprng.h"

namespace fedmf::data {

// One party's view. Ratings use LOCAL indices on both axes:
// rating.user indexes `global_users`, rating.item indexes `global_items`.
//  - VFL: global_users = all users (identity), global_items = the party's items F_k.
//  - HFL: global_users = the party's users U_k, global_items = all items (identity).
//  - LFL: one user per party (device), all items.
struct PartyData {
  int32_t party = 0;
  IndexMap global_users;
  IndexMap global_items;
  std::vector<Rating> train;
  std::vector<Rating> test;
  RatingRange range;
  int32_t num_users() const { return static_cast<int32_t>(global_users.size()); }
  int32_t num_items() const { return static_cast<int32_t>(global_items.size()); }
};

struct Federation {
  int32_t num_users = 0;  // global
  int32_t num_items = 0;  // global
  RatingRange range;
  std::vector<PartyData> parties;
};

// Every partitioner validates num_parties (1..num_items for VFL, 1..num_users
// for HFL) and test_fraction (in [0, 1)). Randomness comes only from
// Csprng::FromSeed(seed), forked per purpose ("assign/...", "split"/party), so
// a partition is a pure function of (dataset, arguments, seed). Each party's
// ratings are shuffled and round(test_fraction * count) go to `test`, the rest
// to `train`; both are sorted by (user, item) in local indices.
struct SplitOptions {
  double test_fraction = 0.1;  // per party, of each party's ratings
  uint64_t seed = 1;
};

// VFL, random: items assigned uniformly at random to `num_parties` parties
// (every party gets at least one item; error if num_items < num_parties).
absl::StatusOr<Federation> PartitionVflRandom(const Dataset& dataset, int32_t num_parties,
                                              const SplitOptions& split);
// VFL, by genre: `item_genres[i]` from LoadMovieLensGenres. A multi-genre item
// goes to its genre with the fewest items (the paper's rule); genres are then
// the parties (empty genres are dropped; num_parties = number of non-empty genres).
// Parties are in increasing genre id order; party k's genre is
// AssignItemsToSmallestGenre(item_genres)[global_items[0]].
absl::StatusOr<Federation> PartitionVflByGenre(const Dataset& dataset,
                                               const std::vector<std::vector<int>>& item_genres,
                                               const SplitOptions& split);
// The genre PartitionVflByGenre puts each item in: among the item's genres the
// one flagged on the fewest items (ties: lowest id); an item with no genre
// goes to genre 0 ("unknown", as u.item does). Errors on negative ids.
absl::StatusOr<std::vector<int>> AssignItemsToSmallestGenre(
    const std::vector<std::vector<int>>& item_genres);

// HFL: users assigned uniformly at random to parties (each party >= 1 user).
absl::StatusOr<Federation> PartitionHfl(const Dataset& dataset, int32_t num_parties,
                                        const SplitOptions& split);
// Parties that bring their own data rather than one file split at random:
// owner[e] is the party (in [0, num_parties)) that holds user e (kUsers:
// HFL) or item e (kItems: VFL); every party must own at least one.
enum class OwnedAxis { kUsers, kItems };
absl::StatusOr<Federation> PartitionByOwner(const Dataset& dataset, OwnedAxis axis,
                                            std::vector<int32_t> owner, int32_t num_parties,
                                            const SplitOptions& split);
// LFL: one party (device) per user, all items.
absl::StatusOr<Federation> PartitionLfl(const Dataset& dataset, const SplitOptions& split);
// `ratings` (in `party`'s local indices) in the global indices of a
// federation of num_users x num_items. InvalidArgument naming the party if a
// rating lies outside its local or the global index space.
absl::StatusOr<std::vector<Rating>> ToGlobalIndices(const PartyData& party,
                                                    const std::vector<Rating>& ratings,
                                                    int32_t num_users, int32_t num_items);
// A validation split carved from a party's own training ratings: moves
// round(fraction * train.size()) of them, at most train.size() - 1 (one
// rating always stays to train on), chosen uniformly by `rng`, out of
// `train` and returns them. Both are left sorted by (user, item). Local:
// only the party that holds `train` ever sees the split, so choosing with it
// releases nothing. fraction must be in [0, 1) (checked by the caller's
// config validation; outside it nothing is held out).
std::vector<Rating> HoldOut(std::vector<Rating>& train, double fraction, random::Csprng& rng);
// As HoldOut, but user by user: each user's round(fraction * n_u) ratings (at
// most n_u - 1) chosen with that user's own stream rng.Fork("<user>"). One
// user's ratings never change another user's split, which the per-user DP
// analyses need (docs/privacy.md, section hfl-alternate): with one split
// over all ratings, removing a user changes how many of every other user's
// ratings are held out.
std::vector<Rating> HoldOutPerUser(std::vector<Rating>& train, double fraction,
                                   const random::Csprng& rng);

// The whole dataset as one party (central baseline), split 90/10.
absl::StatusOr<Federation> PartitionCentral(const Dataset& dataset, const SplitOptions& split);
// The same federation, built in the dataset's own storage (its ratings are
// consumed): a central run on millions of ratings never holds them twice.
absl::StatusOr<Federation> PartitionCentral(Dataset&& dataset, const SplitOptions& split);

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_PARTITION_H_
