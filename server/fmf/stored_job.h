// What the coordination server keeps of an FMF job (server/fmf/server_store.h
// persists it, server/fmf/fmf_job.h runs it): the spec, the lifecycle state, each
// roster party's reply and reports, every closed round and the shared matrix.
#ifndef FEDMF_SERVER_FMF_STORED_JOB_H_
#define FEDMF_SERVER_FMF_STORED_JOB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/mf/embeddings.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

struct StoredParty {
  std::string name;
  bool replied = false;
  bool accepted = false;
  std::string refusal;
  double weight = 0;
  int32_t users = 0;
  int32_t items = 0;
  int32_t global_users = 0;
  int32_t global_items = 0;
  double epsilon = 0;
  double test_mse = -1;
  int64_t test_count = 0;
  int32_t last_round = -1;
  bool finished = false;
};

struct StoredJob {
  v1::JobSpec spec;
  v1::JobState state = v1::JOB_STATE_WAITING;
  int32_t round = 0;  // next round to run
  std::string error;
  std::string submitter;             // the operator's certificate name ("" = unknown or insecure)
  std::optional<mf::Matrix> shared;  // input of `round` (absent while waiting)
  std::vector<StoredParty> parties;  // roster order
  std::vector<v1::RoundRecord> rounds;
  // The parties' reports by round (a round's may precede its record: a party
  // reports right after its upload, the round closes on the last one).
  std::map<int32_t, std::vector<v1::PartyRoundReport>> reports;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_FMF_STORED_JOB_H_
