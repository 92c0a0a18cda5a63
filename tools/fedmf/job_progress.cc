#include "tools/fedmf/job_progress.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {

Progress ProgressOf(const v1::JobStatus& st) {
  Progress p;
  p.done = std::max(st.rounds_completed(), st.rounds_size());
  p.total = TotalRounds(st);
  for (const v1::RoundRecord& r : st.rounds()) p.seconds += r.seconds();
  if (st.state() == v1::JOB_STATE_RUNNING && st.rounds_size() > 0 && p.total >= p.done) {
    p.eta_seconds = p.seconds / st.rounds_size() * (p.total - p.done);
  }
  return p;
}

std::string ProgressBar(const Progress& p) {
  constexpr int kWidth = 30;
  const int filled = p.total > 0 ? std::clamp(p.done * kWidth / p.total, 0, kWidth) : 0;
  std::string bar =
      absl::StrCat("[", std::string(filled, '#'), std::string(kWidth - filled, '.'), "]");
  absl::StrAppendFormat(&bar, " %4d/%d rounds", p.done, p.total);
  if (p.eta_seconds) absl::StrAppendFormat(&bar, ", ETA %.1f s", *p.eta_seconds);
  return bar;
}

bool RoundReported(const v1::JobStatus& st, int i) {
  if (i + 1 < st.rounds_size()) return true;
  if (st.state() == v1::JOB_STATE_FINISHED || st.state() == v1::JOB_STATE_FAILED) return true;
  const v1::RoundRecord& r = st.rounds(i);
  return std::all_of(r.contributors().begin(), r.contributors().end(), [&](const std::string& c) {
    return std::any_of(r.reports().begin(), r.reports().end(),
                       [&](const v1::PartyRoundReport& p) { return p.party() == c; });
  });
}

std::string RoundLine(const v1::JobStatus& st, int i, double elapsed) {
  const v1::RoundRecord& r = st.rounds(i);
  std::vector<std::string> eps, mse;
  for (const v1::PartyRoundReport& p : r.reports()) {
    eps.push_back(absl::StrFormat("%s %.3f", p.party(), p.job_epsilon()));
    if (p.has_test_mse()) mse.push_back(absl::StrFormat("%s %.4f", p.party(), p.test_mse()));
  }
  std::string line = absl::StrFormat(
      "round %4d/%d  %6.2f s (%.1f s in rounds)  %d/%d parties", r.round() + 1, TotalRounds(st),
      r.seconds(), elapsed, r.contributors_size(), r.contributors_size() + r.missing_size());
  if (!r.missing().empty())
    absl::StrAppend(&line, " (missing ", absl::StrJoin(r.missing(), ", "), ")");
  if (!eps.empty()) absl::StrAppend(&line, "  epsilon: ", absl::StrJoin(eps, ", "));
  if (!mse.empty()) absl::StrAppend(&line, "  test MSE: ", absl::StrJoin(mse, ", "));
  return line;
}

nlohmann::json RoundJson(const v1::RoundRecord& r) {
  nlohmann::json reports = nlohmann::json::array();
  for (const v1::PartyRoundReport& p : r.reports()) {
    reports.push_back(
        {{"party", p.party()},
         {"epsilon", JsonNumber(p.job_epsilon())},
         {"ledger_epsilon", JsonNumber(p.ledger_epsilon())},
         {"test_mse", p.has_test_mse() ? nlohmann::json(p.test_mse()) : nlohmann::json(nullptr)},
         {"test_count", p.test_count()}});
  }
  return {{"round", r.round()},
          {"seconds", r.seconds()},
          {"contributors", r.contributors()},
          {"missing", r.missing()},
          {"reports", reports}};
}

}  // namespace fedmf::cli
