// The recommender's side of one Hua et al. S3 job as an explicit state
// machine (no gRPC, no threads, no clock of its own: the caller passes `now`).
// It reuses common/hua's Recommender (V, H_j, masks, tau^_j) and OnlinePool
// (join/leave dynamics), in the same order as common/hua's protocol driver,
// so a job whose users are all connected reproduces `fedmf train --setting
// hua-s3` with the same seed.
//
//   REGISTERING --(expected users registered | join deadline)--> RUNNING
//   RUNNING, per iteration t = 1..T:
//     pool.Step() (t > 1); [INIT round for items without tau^_j];
//     ITERATION pass 0 with at most K online users; repair passes for items
//     whose sums the aggregator withheld (a user vanished mid-iteration: its
//     items are re-planned among the users still there, fresh masks and
//     tau^ shares); FinishIteration applies v_j(t).
//   Each round: kBegin (send the plan to the aggregator) -> Begun() -> hosts
//   poll their requests, report to the aggregator, MarkDone -> kFlush when
//   every planned user is done or the round deadline passed -> Flushed().
//   RUNNING --(t = T done)--> kEndJob -> FINISHING (hosts fetch V, report test
//   error) --(all hosts reported | finish deadline)--> FINISHED.
// Any protocol error (e.g. a sum that does not decode) -> FAILED.
#ifndef FEDMF_SERVER_HUA_HUA_S3_JOB_H_
#define FEDMF_SERVER_HUA_HUA_S3_JOB_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/data/ratings.h"
#include "common/hua/accounting.h"
#include "common/hua/dynamics.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "common/hua/recommender.h"
#include "common/hua/zp_codec.h"

namespace fedmf::server {

struct HuaGrant {
  std::string host;
  int32_t first_user = 0;
  int32_t count = 0;
};

struct HuaS3Config {
  std::string job_id;
  hua::HuaParams params;  // scenario kDynamic
  data::RatingRange range;
  int32_t num_items = 0;
  std::optional<uint64_t> seed;  // tests: the simulator's streams; else OS entropy
  std::vector<HuaGrant> grants;
  int32_t expected_users = 0;  // 0: wait for the join deadline
  absl::Duration join_deadline = absl::Seconds(60);
  absl::Duration round_deadline = absl::Seconds(30);
  absl::Duration finish_deadline = absl::Seconds(60);
  absl::Duration liveness = absl::Seconds(10);  // a host silent longer is offline
};

enum class HuaJobState { kRegistering, kRunning, kFinishing, kFinished, kFailed };
const char* HuaJobStateName(HuaJobState s);

// What the runner must do with the aggregator now.
struct HuaAction {
  enum Kind { kNone, kBegin, kFlush, kEndJob } kind = kNone;
  hua::AggregationPlan plan;                  // kBegin
  std::map<int32_t, std::string> hosts;       // kBegin: who speaks for each planned user
  hua::Phase phase = hua::Phase::kIteration;  // kFlush
  int32_t round = 0, pass = 0;                // kFlush
};

// A host's requests in the open round.
struct HuaHostTasks {
  enum Kind { kIdle, kInit, kIteration, kFinish, kAbort } kind = kIdle;
  hua::Phase phase = hua::Phase::kIteration;
  int32_t round = 0, pass = 0;
  std::vector<hua::InitRequest> init;
  std::vector<hua::IterationRequest> iteration;
  std::string reason;  // kAbort
};

// One user's spend as the recommender counts it (hua::Recommender::releases).
struct HuaUserSpend {
  int32_t user = 0;
  int32_t releases = 0;
  double epsilon = 0;
};

struct HuaIterationLog {
  int32_t iteration = 0;
  int32_t users = 0;
  hua::IterationStats stats;
  double seconds = 0;
};

class HuaS3Job {
 public:
  static absl::StatusOr<std::unique_ptr<HuaS3Job>> Create(HuaS3Config config, absl::Time now);

  // ---- device hosts (the caller authenticated `host`)
  // Registers the host's users (only inside its grant, only while REGISTERING).
  absl::StatusOr<int32_t> Register(const std::string& host,
                                   const std::vector<hua::UserHello>& users, absl::Time now);
  HuaHostTasks TasksFor(const std::string& host, absl::Time now);
  // The host's users whose reports the aggregator accepted in (phase, round, pass).
  absl::Status MarkDone(const std::string& host, hua::Phase phase, int32_t round, int32_t pass,
                        const std::vector<int32_t>& users);
  absl::StatusOr<mf::Matrix> FinalItems(const std::string& host) const;
  absl::Status ReportResult(const std::string& host, int64_t count, double mse, double mae,
                            absl::Time now);

  // ---- the runner
  HuaAction NextAction(absl::Time now);
  void Begun();  // the aggregator accepted the plan
  absl::Status Flushed(const hua::AggregateForward& forward, absl::Time now);
  void EndedAtAggregator(absl::Time now);  // after kEndJob
  void Fail(const std::string& why);

  // ---- status
  const HuaS3Config& config() const { return config_; }
  HuaJobState state() const { return state_; }
  const std::string& error() const { return error_; }
  int32_t iteration() const { return recommender_->iteration(); }
  int32_t registered_users() const { return static_cast<int32_t>(user_host_.size()); }
  int32_t uninitialized_items() const { return recommender_->uninitialized_items(); }
  int32_t init_rounds() const { return init_rounds_; }
  const std::vector<HuaIterationLog>& log() const { return log_; }
  // Aggregated over the hosts' reports.
  int64_t test_count() const { return test_count_; }
  double test_mse() const;
  double test_mae() const;
  const mf::Matrix& item_profiles() const { return recommender_->item_profiles(); }
  // The job's privacy plan (hua::PlanPrivacy from its public parameters).
  const hua::HuaPrivacy& privacy() const { return privacy_; }
  // Every registered user's spend so far, and the largest epsilon among them
  // (the job's `epsilon`; +inf for the paper's mechanism or without noise
  // once anyone released).
  std::vector<HuaUserSpend> UserSpend() const;
  double epsilon() const;

 private:
  HuaS3Job(HuaS3Config config, hua::ZpCodec codec, absl::Time now);

  enum class Stage { kStartIteration, kInit, kIterate };
  struct OpenRound {
    hua::Phase phase = hua::Phase::kIteration;
    int32_t round = 0, pass = 0;
    std::map<int32_t, hua::InitRequest> init;            // by user
    std::map<int32_t, hua::IterationRequest> iteration;  // by user
    std::set<int32_t> planned;
    std::set<int32_t> done;
    hua::AggregationPlan plan;
    bool begun = false;
    absl::Time started;
  };

  const std::string* HostOf(int32_t user) const;
  bool Connected(int32_t user, absl::Time now) const;
  std::vector<int32_t> ConnectedOnly(const std::vector<int32_t>& users, absl::Time now) const;
  absl::Status Start();
  // Builds the next round; kNone when the job moved to FINISHING (kEndJob).
  HuaAction BuildNext(absl::Time now);
  HuaAction BeginAction() const;
  void OpenIterationPass(hua::Round round, absl::Time now);

  HuaS3Config config_;
  hua::ZpCodec codec_;
  hua::HuaPrivacy privacy_;
  std::optional<hua::Recommender> recommender_;
  std::optional<hua::OnlinePool> pool_;
  HuaJobState state_ = HuaJobState::kRegistering;
  std::string error_;
  absl::Time created_;
  absl::Time finishing_since_;
  bool ended_at_aggregator_ = false;
  Stage stage_ = Stage::kStartIteration;
  std::optional<OpenRound> open_;
  std::map<int32_t, std::string> user_host_;
  std::map<std::string, absl::Time> last_seen_;
  std::vector<int32_t> iteration_users_;  // selected for the open iteration
  absl::Time iteration_started_;
  int32_t init_rounds_ = 0;
  std::vector<HuaIterationLog> log_;
  std::map<std::string, std::tuple<int64_t, double, double>> results_;  // host -> n, sse, sae
  int64_t test_count_ = 0;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_HUA_HUA_S3_JOB_H_
