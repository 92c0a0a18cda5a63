// Internal: turns "which party owns each user / item" into a Federation:
// local indices on both axes, and a per-party seeded train/test split.
#ifndef FEDMF_COMMON_DATA_INTERNAL_FEDERATION_BUILDER_H_
#define FEDMF_COMMON_DATA_INTERNAL_FEDERATION_BUILDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/data/ratings.h"
#include "common/random/csprng.h"

namespace fedmf::data::internal {

// Parties own disjoint sets along one axis and all of the other axis.
struct Ownership {
  enum Axis { kUsers, kItems };
  Axis axis = kUsers;
  int32_t num_parties = 0;
  // Per user (kUsers) or per item (kItems): the owning party, in
  // [0, num_parties); every party must own at least one.
  std::vector<int32_t> owner;
};

// Party k's ratings (in dataset order) are shuffled with split_rng.Fork("k")
// and the first round(test_fraction * count) become its test set. Both sets
// are then sorted by (user, item) so the output does not depend on hashing or
// shuffle internals beyond the seed.
// `consumable`: null, or &dataset.ratings when the caller gives them up —
// then a single party's bucket takes over their storage instead of a copy
// (same ratings in the same order, so the same federation).
absl::StatusOr<Federation> BuildFederation(const Dataset& dataset, const Ownership& ownership,
                                           double test_fraction, const random::Csprng& split_rng,
                                           std::vector<Rating>* consumable = nullptr);

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_FEDERATION_BUILDER_H_
