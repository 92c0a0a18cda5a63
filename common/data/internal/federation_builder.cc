#include "common/data/internal/federation_builder.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/unused_capacity.h"

namespace fedmf::data::internal {
namespace {

bool ByUserItem(const Rating& a, const Rating& b) {
  return a.user != b.user ? a.user < b.user : a.item < b.item;
}

void SplitTrainTest(std::vector<Rating> ratings, double test_fraction, random::Csprng rng,
                    PartyData& party) {
  std::shuffle(ratings.begin(), ratings.end(), rng);
  const auto num_test =
      static_cast<size_t>(std::llround(test_fraction * static_cast<double>(ratings.size())));
  party.test.assign(ratings.begin(), ratings.begin() + num_test);
  // The training ratings stay in the bucket's storage (no second copy of
  // millions of ratings): the same elements in the same order as a copy.
  ratings.erase(ratings.begin(), ratings.begin() + static_cast<std::ptrdiff_t>(num_test));
  party.train = std::move(ratings);
  base::ReleaseUnusedCapacity(party.train);  // the test tenth's slack, kept otherwise
  std::sort(party.test.begin(), party.test.end(), ByUserItem);
  std::sort(party.train.begin(), party.train.end(), ByUserItem);
}

// Each party's ratings with its local index on the owned axis, in dataset
// order; exact sizes first, so no bucket grows to twice what it holds.
void FillBuckets(const Dataset& dataset, const Ownership& ownership,
                 const std::vector<int32_t>& local, std::vector<std::vector<Rating>>& buckets) {
  const bool by_user = ownership.axis == Ownership::kUsers;
  std::vector<size_t> bucket_size(ownership.num_parties, 0);
  for (const Rating& r : dataset.ratings) ++bucket_size[ownership.owner[by_user ? r.user : r.item]];
  for (int32_t k = 0; k < ownership.num_parties; ++k) buckets[k].reserve(bucket_size[k]);
  for (const Rating& r : dataset.ratings) {
    const int32_t e = by_user ? r.user : r.item;
    Rating localized = r;
    (by_user ? localized.user : localized.item) = local[e];
    buckets[ownership.owner[e]].push_back(localized);
  }
}

}  // namespace

absl::StatusOr<Federation> BuildFederation(const Dataset& dataset, const Ownership& ownership,
                                           double test_fraction, const random::Csprng& split_rng,
                                           std::vector<Rating>* consumable) {
  const bool by_user = ownership.axis == Ownership::kUsers;
  const int32_t owned_count = by_user ? dataset.num_users : dataset.num_items;
  const int32_t shared_count = by_user ? dataset.num_items : dataset.num_users;
  if (ownership.owner.size() != static_cast<size_t>(owned_count)) {
    return absl::InternalError("ownership does not cover the dataset");
  }

  Federation fed;
  fed.num_users = dataset.num_users;
  fed.num_items = dataset.num_items;
  fed.range = dataset.range;
  fed.parties.resize(ownership.num_parties);
  // local[e] = position of entity e in its owner's (ascending) global list.
  std::vector<int32_t> local(owned_count);
  const IndexMap shared = IndexMap::Identity(shared_count);
  for (int32_t k = 0; k < ownership.num_parties; ++k) {
    PartyData& p = fed.parties[k];
    p.party = k;
    p.range = dataset.range;
    (by_user ? p.global_items : p.global_users) = shared;
  }
  for (int32_t e = 0; e < owned_count; ++e) {
    const int32_t k = ownership.owner[e];
    if (k < 0 || k >= ownership.num_parties) return absl::InternalError("owner out of range");
    IndexMap& owned = by_user ? fed.parties[k].global_users : fed.parties[k].global_items;
    local[e] = static_cast<int32_t>(owned.size());
    owned.push_back(e);
  }

  std::vector<std::vector<Rating>> buckets(ownership.num_parties);
  if (consumable != nullptr && ownership.num_parties == 1) {
    // One owner: its bucket is every rating, in dataset order.
    buckets[0] = std::move(*consumable);
    for (Rating& r : buckets[0]) (by_user ? r.user : r.item) = local[by_user ? r.user : r.item];
  } else {
    FillBuckets(dataset, ownership, local, buckets);
  }
  for (int32_t k = 0; k < ownership.num_parties; ++k) {
    if ((by_user ? fed.parties[k].global_users : fed.parties[k].global_items).empty()) {
      return absl::InternalError(absl::StrCat("party ", k, " owns nothing"));
    }
    SplitTrainTest(std::move(buckets[k]), test_fraction, split_rng.Fork(std::to_string(k)),
                   fed.parties[k]);
  }
  return fed;
}

}  // namespace fedmf::data::internal
