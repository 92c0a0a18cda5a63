#include "common/net/job_view.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"

namespace fedmf::net {

std::string JobWord(const v1::JobStatus& st) {
  switch (st.state()) {
    case v1::JOB_STATE_WAITING:
      return st.queued_behind().empty()
                 ? "pending"
                 : absl::StrCat("queued (behind job ",
                                base::EscapePeerText(st.queued_behind(), 256), ")");
    case v1::JOB_STATE_RUNNING: return "running";
    case v1::JOB_STATE_FINISHED: return "finished";
    case v1::JOB_STATE_FAILED: return "failed";
    default: return "unknown";
  }
}

std::string PartyWord(const v1::PartyStatus& p) {
  if (!p.replied()) return "pending";
  if (p.accepted()) return "accepted";
  // A party's own text: escaped (and bounded) wherever it is shown.
  return absl::StrCat("refused: ", base::EscapePeerText(p.refusal()));
}

int32_t TotalRounds(const v1::JobStatus& st) {
  const v1::JobSpec& spec = st.spec();
  return spec.setting() == v1::SETTING_HFL_SYNSGD ? spec.rounds() * std::max(1, spec.local_iters())
                                                  : spec.rounds();
}

std::vector<plot::LineChart> JobRoundCharts(const v1::JobStatus& st) {
  plot::LineChart mse{"mse", "test MSE per party (opt-in reports)", "round", "test MSE", {}};
  plot::LineChart eps{"epsilon", "this job's epsilon per party", "round", "epsilon", {}};
  plot::LineChart secs{"seconds", "round duration", "round", "seconds", {{"round time", {}}}};
  for (const v1::PartyStatus& p : st.parties()) {
    plot::Series m{p.name(), {}}, e{p.name(), {}};
    for (const v1::RoundRecord& r : st.rounds()) {
      for (const v1::PartyRoundReport& rep : r.reports()) {
        if (rep.party() != p.name()) continue;
        e.points.emplace_back(r.round() + 1, rep.job_epsilon());
        if (rep.has_test_mse()) m.points.emplace_back(r.round() + 1, rep.test_mse());
      }
    }
    if (!m.points.empty()) mse.series.push_back(std::move(m));
    if (!e.points.empty()) eps.series.push_back(std::move(e));
  }
  for (const v1::RoundRecord& r : st.rounds()) {
    secs.series[0].points.emplace_back(r.round() + 1, r.seconds());
  }
  return {mse, eps, secs};
}

}  // namespace fedmf::net
