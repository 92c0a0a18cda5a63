// How a job reads to people, from its v1::JobStatus: the state words of
// `fedmf job status` and the dashboard, the rounds it will run, and charts
// of its per-round history (this job's ε per party, the test MSE of the
// parties that opted in to report it, round times).
#ifndef FEDMF_COMMON_NET_JOB_VIEW_H_
#define FEDMF_COMMON_NET_JOB_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/plot/svg_chart.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::net {

// "pending" (waiting for the parties' answers), "queued (behind job X)",
// "running", "finished", "failed".
std::string JobWord(const v1::JobStatus& st);
// "pending" (has not answered the offer), "accepted", "refused: <reason>".
std::string PartyWord(const v1::PartyStatus& p);
// As above in its job: a party that never answered a job that has ended is
// not "pending" but "no answer (the job ended: failed)"; one that accepted an
// align_users job whose alignment ended it first, "accepted, users not
// aligned (the job failed)".
std::string PartyWord(const v1::JobStatus& st, const v1::PartyStatus& p);
// "hfl", "vfl", "hfl-synsgd", "coupling", "lfl", "hua-s3": the setting as
// job files and the CLI write it (not the proto's SETTING_HFL).
std::string SettingWord(v1::Setting setting);
// Rounds the job will run (HFL-synSGD: T x T' aggregations).
int32_t TotalRounds(const v1::JobStatus& st);

// Chart ids "mse", "epsilon", "seconds", in that order; x is the 1-based
// round; one series per party in roster order (parties that never reported
// a value have no series on that chart), "round time" on "seconds". A party
// that reported its final test MSE (after Stage 3) has it as its series'
// final_point, one round after the last recorded round.
std::vector<plot::LineChart> JobRoundCharts(const v1::JobStatus& st);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_JOB_VIEW_H_
