// A trained party model on disk, so recommendations work offline: `fedmf
// train --save-model DIR` writes one per party of the federation, a party
// operator exports its own (`fedmf export-model`), and `fedmf recommend
// --model DIR` reads it. The model stays with whoever saved it: it holds the
// party's private embeddings and which items each of its users rated.
//
// Format (version 1), a directory:
//   model.json        {"format": "fedmf-model", "version": 1, "setting", "job",
//                      "parties": [{"name", "users", "items", "dim",
//                      "range": [min, max], "rating_offset", "rated",
//                      "ranking": {"shrinkage", "popularity_weight", "mean"}}]}
//                    ("ranking" optional: absent = rank by the prediction alone)
//   <name>.users.txt  the party's user ids, one per line, row order of U
//   <name>.items.txt  its item ids, one per line, row order of V
//   <name>.u.f64      U: users x dim little-endian doubles, row-major
//   <name>.v.f64      V: items x dim, the same
//   <name>.rated.i32  (user row, item row) pairs the party holds ratings for
// Ids may not contain a newline (the loaders never produce one).
#ifndef FEDMF_COMMON_FMF_SAVED_MODEL_H_
#define FEDMF_COMMON_FMF_SAVED_MODEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/mf/embeddings.h"
#include "common/mf/ranking.h"

namespace fedmf::fmf {

struct SavedPartyModel {
  std::string name;                   // file-name safe: [A-Za-z0-9._-]+
  std::vector<std::string> user_ids;  // row i of u is user_ids[i]
  std::vector<std::string> item_ids;  // row j of v is item_ids[j]
  mf::Matrix u, v;
  data::RatingRange range;                         // predictions are clamped to it, then
  double rating_offset = 0;                        //   the offset is added (negative scales)
  std::vector<std::pair<int32_t, int32_t>> rated;  // (user row, item row)
  // How recommendations are ordered (mf/ranking.h; chosen on the party's
  // validation ratings when it trained): the rule's support is `rated`.
  mf::RankingRule ranking;
};

struct SavedModel {
  std::string setting;  // e.g. "hfl"
  std::string job;      // the job id, or the data label of fedmf train
  std::vector<SavedPartyModel> parties;
};

// A party's model from its data (local rows -> global ids -> external ids
// through `user_ids` / `item_ids`, indexed by global id) and its final
// embeddings (rows in the party's local order).
absl::StatusOr<SavedPartyModel> PartyModelFrom(std::string name, const data::PartyData& data,
                                               const mf::Matrix& u, const mf::Matrix& v,
                                               double rating_offset,
                                               const std::vector<std::string>& user_ids,
                                               const std::vector<std::string>& item_ids,
                                               const mf::RankingRule& ranking = {});

// Writes `model` into `dir` (created if missing; the files it names are
// replaced). Checks shapes first, so nothing is written for a bad model.
absl::Status WriteSavedModel(const std::string& dir, const SavedModel& model);
// Reads a directory WriteSavedModel wrote; errors name the file and field.
absl::StatusOr<SavedModel> ReadSavedModel(const std::string& dir);

// Top-N items for `user`, best first by model.ranking (support: `rated`;
// ties by item row), each with its predicted rating (clamped + offset).
// Items the user rated are left out unless include_rated.
absl::StatusOr<std::vector<std::pair<std::string, double>>> RecommendFromModel(
    const SavedPartyModel& model, const std::string& user, int32_t top_n, bool include_rated);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_SAVED_MODEL_H_
