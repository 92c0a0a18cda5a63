// What `fedmf train` trains on: one --data set split by a partitioner, or the
// partners' own --party-data files joined by external ids (an item catalogue
// for HFL, a private set intersection of user ids for VFL).
#ifndef FEDMF_TOOLS_FEDMF_TRAIN_DATA_H_
#define FEDMF_TOOLS_FEDMF_TRAIN_DATA_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/fmf/job_config.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

struct TrainData {
  fmf::JobConfig config;
  data::Federation federation;
  std::string label;  // the --data spec, or the --party-data specs joined by ' + '
  // --party-data only: how the files were joined, for the JSON and summary.
  std::optional<nlohmann::json> join;
  std::vector<std::string> notes;  // lines for the text summary
  // "warning: ..." lines (ratings left out, with the first file:line): printed
  // to stderr before training and again with the summary, in text and JSON.
  std::vector<std::string> warnings;
  // External ids by global index (the file's own ids), for saved models: with
  // --data, filled only when --save-model is given.
  std::vector<std::string> user_ids, item_ids;
};

// Loads, validates (--rating-range) and splits; the errors name the flag.
absl::StatusOr<TrainData> LoadTrainData(const JobFlags& flags);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_TRAIN_DATA_H_
