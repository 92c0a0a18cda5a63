// A job's progress as the server reports it (v1::JobStatus): rounds done and
// to go, and one line or JSON object per closed round with what each party
// reported after it. Shared by `fedmf job status|watch` and `fedmf demo`.
#ifndef FEDMF_TOOLS_FEDMF_JOB_PROGRESS_H_
#define FEDMF_TOOLS_FEDMF_JOB_PROGRESS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/net/job_view.h"
#include "fedmf/v1/federation.pb.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {

using net::TotalRounds;

struct Progress {
  int32_t done = 0, total = 0;
  double seconds = 0;                 // in the rounds so far
  std::optional<double> eta_seconds;  // mean round time x rounds left, while running
};
Progress ProgressOf(const v1::JobStatus& st);

// "[########............]   4/10 rounds, ETA 2.1 s" (no newline): redrawn
// in place on a terminal.
std::string ProgressBar(const Progress& p);

// Whether round `i` of st.rounds() is final as printed: every contributor
// has reported after it, or a later round closed, or the job ended (a party
// reports right after its upload, so its report can trail the round's close).
bool RoundReported(const v1::JobStatus& st, int i);

// Follows one job's history across polls of its status: hands out each
// round once, when it is final, with the seconds spent in rounds up to it
// (a running sum, so a long job's lines cost O(1) each).
class RoundFollower {
 public:
  // Calls `emit(i, seconds_in_rounds)` for every round of st.rounds() newly final.
  template <typename Emit>
  void Follow(const v1::JobStatus& st, Emit&& emit) {
    for (; next_ < st.rounds_size() && RoundReported(st, next_); ++next_) {
      elapsed_ += st.rounds(next_).seconds();
      emit(next_, elapsed_);
    }
  }

 private:
  int next_ = 0;
  double elapsed_ = 0;
};

// "round    3/10   0.12 s (1.4 s in rounds)  3/3 parties  epsilon: a 0.213, b 0.213
//  test MSE: a 0.9512" — ε is this job's per party, MSE only where reported.
std::string RoundLine(const v1::JobStatus& st, int i, double seconds_in_rounds);

// {round, seconds, contributors, missing, reports: [{party, epsilon,
// ledger_epsilon, test_mse, test_count}]}
nlohmann::json RoundJson(const v1::RoundRecord& r);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_JOB_PROGRESS_H_
