// Cross-domain data for PPGenCDR (Liao et al., AAAI 2023) built from one
// MovieLens rating file: its items split into two genre domains that share
// the users. The source party holds the source domain's positives, the target
// party the target domain's, with one validation and one test item left out
// per user (leave-one-out, 99 sampled negatives each, as the paper's protocol).
#ifndef FEDMF_COMMON_CDR_CROSS_DOMAIN_DATA_H_
#define FEDMF_COMMON_CDR_CROSS_DOMAIN_DATA_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::cdr {

// The source domain's genres (u.item ids, common/data/loaders.h): the
// "thrill" genres — Action, Adventure, Crime, Fantasy, Film-Noir, Horror,
// Mystery, Sci-Fi, Thriller, War, Western. An item flagged with any of them is
// a source item; every other item (Comedy, Drama, Romance, Children's,
// Animation, Musical, Documentary, unknown) is a target item. Why this split:
// it is a fixed rule (no data-dependent choice to tune), it gives two
// disjoint, taste-coherent catalogues, and it makes the target the sparser
// domain as in the paper's CDR setting (ML-100K: 709 source items with 46,243
// positives, 973 target items with 36,277 positives, before filtering).
inline constexpr std::array<int, 11> kSourceGenres = {1, 2, 6, 9, 10, 11, 13, 15, 16, 17, 18};

struct CrossDomainOptions {
  double positive_threshold = 3.0;  // rating >= this is a positive (the paper's)
  int32_t min_interactions = 5;     // users and items with fewer positives are dropped
  int32_t num_negatives = 99;       // sampled unrated target items per held-out item
  uint64_t seed = 1;                // held-out items and negatives
  // > 0: keep at most this many target training positives per user (a random
  // subset, after the hold-outs) — the target's sparsity, as the paper's
  // Fig. 4(d) varies it. The dropped positives are neither training data nor
  // sampled as negatives. 0 keeps all.
  int32_t max_target_train = 0;
};

// One leave-one-out case: the held-out positive and its sampled negatives
// (target items the user never rated), all target-domain indices.
struct EvalCase {
  int32_t user = 0;
  int32_t positive = 0;
  std::vector<int32_t> negatives;
};

struct CrossDomainData {
  int32_t num_users = 0;
  int32_t num_source_items = 0;
  int32_t num_target_items = 0;
  // Per user (dense index), the sorted positive items of each domain.
  // source[u] is the source party's private vector of user u.
  std::vector<std::vector<int32_t>> source;
  std::vector<std::vector<int32_t>> target_train;
  std::vector<EvalCase> validation;  // one per user, carved from the target training positives
  std::vector<EvalCase> test;        // one per user
  // The original ids, for reporting.
  std::vector<std::string> user_ids;
  std::vector<std::string> source_item_ids;
  std::vector<std::string> target_item_ids;
};

// true for items of the source domain: those flagged with any genre in
// `source_genres`. `item_genres[i]` lists item i's genre ids
// (data::LoadMovieLensGenres, or any MovieLens genre list mapped to ids).
std::vector<bool> AssignSourceDomain(const std::vector<std::vector<int>>& item_genres,
                                     const std::vector<int>& source_genres);

// The two domains of `dataset`: positives only (rating >= threshold), then
// users and items with < min_interactions positives removed — a user needs
// that many in EACH domain, an item in its own domain — repeated until
// nothing changes. Per user, two target positives are held out at random (test,
// then validation), each with num_negatives target items the user never rated
// (at any value), distinct from each other. Errors name what is too small.
absl::StatusOr<CrossDomainData> BuildCrossDomainData(const data::Dataset& dataset,
                                                     const std::vector<bool>& is_source_item,
                                                     const CrossDomainOptions& options);

}  // namespace fedmf::cdr

#endif  // FEDMF_COMMON_CDR_CROSS_DOMAIN_DATA_H_
