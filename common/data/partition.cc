// Partitioners: decide which party owns each user (HFL/LFL/central) or item
// (VFL), then hand that ownership to the common builder (federation_builder.h)
// which localizes indices and splits train/test.
#include "common/data/partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/base/status_macros.h"
#include "common/data/internal/federation_builder.h"
#include "common/random/csprng.h"

namespace fedmf::data {
namespace {

using internal::Ownership;

// Genre ids come from u.item (0..18); anything huge is a caller bug, and
// would make the per-genre count table absurdly large.
constexpr int kMaxGenreId = 1 << 16;

absl::Status ValidateDataset(const Dataset& d) {
  if (d.num_users < 1 || d.num_items < 1 || d.ratings.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("dataset ", d.source, " is empty (", d.num_users,
                                                   " users, ", d.num_items, " items, ",
                                                   d.ratings.size(), " ratings)"));
  }
  for (size_t r = 0; r < d.ratings.size(); ++r) {
    const Rating& x = d.ratings[r];
    if (x.user < 0 || x.user >= d.num_users || x.item < 0 || x.item >= d.num_items) {
      return absl::InvalidArgumentError(
          absl::StrCat("dataset rating #", r, " (user ", x.user, ", item ", x.item, ") is outside ",
                       d.num_users, " users x ", d.num_items, " items"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSplit(const SplitOptions& split) {
  if (!(split.test_fraction >= 0.0 && split.test_fraction < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("test_fraction ", split.test_fraction,
                     " must be in [0, 1): it is the share of each party's ratings held out"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePartyCount(int32_t num_parties, int32_t available, absl::string_view what,
                                absl::string_view setting) {
  if (num_parties < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(setting, " needs at least 1 party, got ", num_parties));
  }
  if (num_parties > available) {
    return absl::InvalidArgumentError(
        absl::StrCat(setting, " gives every party at least one ", what, ": ", num_parties,
                     " parties but the dataset has only ", available, " ", what, "s; use at most ",
                     available, " parties"));
  }
  return absl::OkStatus();
}

// Uniform random owner for each of `count` entities, every party non-empty:
// a random `num_parties` of them seed one party each, the rest pick freely.
std::vector<int32_t> RandomOwners(int32_t count, int32_t num_parties, random::Csprng rng) {
  std::vector<int32_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int32_t> owner(count);
  for (int32_t t = 0; t < count; ++t) {
    owner[order[t]] =
        t < num_parties ? t
                        : static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(num_parties)));
  }
  return owner;
}

// The last step of every partitioner: localize, split (seeded per party).
absl::StatusOr<Federation> Build(const Dataset& dataset, const SplitOptions& split,
                                 const Ownership& ownership,
                                 std::vector<Rating>* consumable = nullptr) {
  return internal::BuildFederation(dataset, ownership, split.test_fraction,
                                   random::Csprng::FromSeed(split.seed).Fork("split"), consumable);
}

absl::Status ValidateCommon(const Dataset& dataset, const SplitOptions& split) {
  RETURN_IF_ERROR(ValidateDataset(dataset));
  return ValidateSplit(split);
}

// One party owning every user; `consumable` as internal::BuildFederation's.
absl::StatusOr<Federation> Central(const Dataset& dataset, const SplitOptions& split,
                                   std::vector<Rating>* consumable) {
  RETURN_IF_ERROR(ValidateCommon(dataset, split));
  Ownership own{Ownership::kUsers, 1, std::vector<int32_t>(dataset.num_users, 0)};
  return Build(dataset, split, own, consumable);
}

}  // namespace

absl::StatusOr<std::vector<int>> AssignItemsToSmallestGenre(
    const std::vector<std::vector<int>>& item_genres) {
  // Genre sizes count every item flagged with the genre; "no flag" is genre 0
  // (unknown), which is how u.item marks such movies itself.
  std::vector<int64_t> size;
  for (size_t i = 0; i < item_genres.size(); ++i) {
    for (int g : item_genres[i]) {
      if (g < 0 || g >= kMaxGenreId) {
        return absl::InvalidArgumentError(absl::StrCat(
            "item ", i, " has genre id ", g, "; genre ids must be in [0, ", kMaxGenreId, ")"));
      }
      if (static_cast<size_t>(g) >= size.size()) size.resize(g + 1, 0);
      ++size[g];
    }
    if (item_genres[i].empty()) {
      if (size.empty()) size.resize(1, 0);
      ++size[0];
    }
  }
  std::vector<int> genre(item_genres.size(), 0);
  for (size_t i = 0; i < item_genres.size(); ++i) {
    if (item_genres[i].empty()) continue;  // genre 0
    // The paper's rule: the genre with the fewest movies, so big genres do
    // not swallow the small ones; ties go to the lowest genre id.
    int best = item_genres[i].front();
    for (int g : item_genres[i]) {
      if (size[g] < size[best] || (size[g] == size[best] && g < best)) best = g;
    }
    genre[i] = best;
  }
  return genre;
}

absl::StatusOr<Federation> PartitionVflRandom(const Dataset& dataset, int32_t num_parties,
                                              const SplitOptions& split) {
  RETURN_IF_ERROR(ValidateCommon(dataset, split));
  RETURN_IF_ERROR(ValidatePartyCount(num_parties, dataset.num_items, "item", "VFL"));
  const random::Csprng root = random::Csprng::FromSeed(split.seed);
  Ownership own{Ownership::kItems, num_parties,
                RandomOwners(dataset.num_items, num_parties, root.Fork("assign/vfl-random"))};
  return Build(dataset, split, own);
}

absl::StatusOr<Federation> PartitionVflByGenre(const Dataset& dataset,
                                               const std::vector<std::vector<int>>& item_genres,
                                               const SplitOptions& split) {
  RETURN_IF_ERROR(ValidateCommon(dataset, split));
  if (item_genres.size() != static_cast<size_t>(dataset.num_items)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "genre list has ", item_genres.size(), " entries but the dataset has ", dataset.num_items,
        " items; load it with LoadMovieLensGenres(u.item, dataset)"));
  }
  ASSIGN_OR_RETURN(std::vector<int> genre, AssignItemsToSmallestGenre(item_genres));
  // Parties are the non-empty genres in genre-id order.
  const int max_genre = *std::max_element(genre.begin(), genre.end());
  std::vector<int32_t> party_of_genre(max_genre + 1, -1);
  for (int g : genre) party_of_genre[g] = 0;
  int32_t num_parties = 0;
  for (int32_t& p : party_of_genre) {
    if (p == 0) p = num_parties++;
  }
  Ownership own{Ownership::kItems, num_parties, std::vector<int32_t>(genre.size())};
  for (size_t i = 0; i < genre.size(); ++i) own.owner[i] = party_of_genre[(genre)[i]];
  return Build(dataset, split, own);
}

absl::StatusOr<Federation> PartitionHfl(const Dataset& dataset, int32_t num_parties,
                                        const SplitOptions& split) {
  RETURN_IF_ERROR(ValidateCommon(dataset, split));
  RETURN_IF_ERROR(ValidatePartyCount(num_parties, dataset.num_users, "user", "HFL"));
  const random::Csprng root = random::Csprng::FromSeed(split.seed);
  Ownership own{Ownership::kUsers, num_parties,
                RandomOwners(dataset.num_users, num_parties, root.Fork("assign/hfl"))};
  return Build(dataset, split, own);
}

absl::StatusOr<Federation> PartitionByOwner(const Dataset& dataset, OwnedAxis axis,
                                            std::vector<int32_t> owner, int32_t num_parties,
                                            const SplitOptions& split) {
  RETURN_IF_ERROR(ValidateCommon(dataset, split));
  const bool users = axis == OwnedAxis::kUsers;
  const int32_t count = users ? dataset.num_users : dataset.num_items;
  const char* what = users ? "user" : "item";
  if (auto s = ValidatePartyCount(num_parties, count, what, users ? "HFL" : "VFL"); !s.ok()) {
    return s;
  }
  if (owner.size() != static_cast<size_t>(count)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "owner list has ", owner.size(), " entries but the dataset has ", count, " ", what, "s"));
  }
  std::vector<int64_t> owned(num_parties, 0);
  for (size_t e = 0; e < owner.size(); ++e) {
    if (owner[e] < 0 || owner[e] >= num_parties) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", e, " has owner ", owner[e], ", outside [0, ", num_parties, ")"));
    }
    ++owned[owner[e]];
  }
  for (int32_t k = 0; k < num_parties; ++k) {
    if (owned[k] == 0) {
      return absl::InvalidArgumentError(absl::StrCat("party ", k, " owns no ", what));
    }
  }
  Ownership own{users ? Ownership::kUsers : Ownership::kItems, num_parties, std::move(owner)};
  return Build(dataset, split, own);
}

absl::StatusOr<Federation> PartitionLfl(const Dataset& dataset, const SplitOptions& split) {
  RETURN_IF_ERROR(ValidateCommon(dataset, split));
  Ownership own{Ownership::kUsers, dataset.num_users, std::vector<int32_t>(dataset.num_users)};
  std::iota(own.owner.begin(), own.owner.end(), 0);
  return Build(dataset, split, own);
}

absl::StatusOr<Federation> PartitionCentral(const Dataset& dataset, const SplitOptions& split) {
  return Central(dataset, split, nullptr);
}

absl::StatusOr<Federation> PartitionCentral(Dataset&& dataset, const SplitOptions& split) {
  return Central(dataset, split, &dataset.ratings);
}

absl::StatusOr<std::vector<Rating>> ToGlobalIndices(const PartyData& party,
                                                    const std::vector<Rating>& ratings,
                                                    int32_t num_users, int32_t num_items) {
  std::vector<Rating> out;
  out.reserve(ratings.size());
  for (Rating r : ratings) {
    if (r.user < 0 || r.user >= party.num_users() || r.item < 0 || r.item >= party.num_items()) {
      return absl::InvalidArgumentError(
          absl::StrCat("party ", party.party, " has a rating outside its index space"));
    }
    r.user = party.global_users[static_cast<size_t>(r.user)];
    r.item = party.global_items[static_cast<size_t>(r.item)];
    if (r.user < 0 || r.user >= num_users || r.item < 0 || r.item >= num_items) {
      return absl::InvalidArgumentError(
          absl::StrCat("party ", party.party, " maps a rating outside the global index space"));
    }
    out.push_back(r);
  }
  return out;
}

std::vector<Rating> HoldOut(std::vector<Rating>& train, double fraction, random::Csprng& rng) {
  if (train.size() < 2 || !(fraction > 0 && fraction < 1)) return {};
  for (size_t i = train.size() - 1; i > 0; --i) {
    const auto j = static_cast<size_t>(rng.UniformInt(static_cast<uint64_t>(i + 1)));
    std::swap(train[i], train[j]);
  }
  const size_t held =
      std::min(train.size() - 1,
               static_cast<size_t>(std::llround(fraction * static_cast<double>(train.size()))));
  std::vector<Rating> out(train.end() - static_cast<std::ptrdiff_t>(held), train.end());
  train.resize(train.size() - held);
  auto by_key = [](const Rating& a, const Rating& b) {
    return a.user != b.user ? a.user < b.user : a.item < b.item;
  };
  std::sort(train.begin(), train.end(), by_key);
  std::sort(out.begin(), out.end(), by_key);
  return out;
}

std::vector<Rating> HoldOutPerUser(std::vector<Rating>& train, double fraction,
                                   const random::Csprng& rng) {
  if (!(fraction > 0 && fraction < 1)) return {};
  auto by_key = [](const Rating& a, const Rating& b) {
    return a.user != b.user ? a.user < b.user : a.item < b.item;
  };
  std::sort(train.begin(), train.end(), by_key);
  std::vector<Rating> kept, out;
  kept.reserve(train.size());
  for (size_t begin = 0; begin < train.size();) {
    size_t end = begin;
    while (end < train.size() && train[end].user == train[begin].user) ++end;
    std::vector<Rating> mine(train.begin() + static_cast<std::ptrdiff_t>(begin),
                             train.begin() + static_cast<std::ptrdiff_t>(end));
    random::Csprng user_rng = rng.Fork(absl::StrCat(mine.front().user));
    std::vector<Rating> held = HoldOut(mine, fraction, user_rng);
    kept.insert(kept.end(), mine.begin(), mine.end());
    out.insert(out.end(), held.begin(), held.end());
    begin = end;
  }
  train = std::move(kept);
  return out;
}

}  // namespace fedmf::data
