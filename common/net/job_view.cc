#include "common/net/job_view.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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

std::string PartyWord(const v1::JobStatus& st, const v1::PartyStatus& p) {
  const bool ended = st.state() == v1::JOB_STATE_FAILED || st.state() == v1::JOB_STATE_FINISHED;
  if (p.replied() || !ended) return PartyWord(p);
  const std::string how = st.state() == v1::JOB_STATE_FAILED ? "failed" : "finished";
  // An align_users job asks for the sizes after the intersection: a party
  // that accepted and was still aligning has not "replied" yet.
  if (st.spec().align_users()) {
    return absl::StrCat("no final answer: the job ", how, " during the user alignment");
  }
  return absl::StrCat("no answer (the job ", how, ")");
}

std::string SettingWord(v1::Setting setting) {
  std::string name = v1::Setting_Name(setting);
  constexpr absl::string_view kPrefix = "SETTING_";
  if (absl::StartsWith(name, kPrefix)) name = name.substr(kPrefix.size());
  name = absl::AsciiStrToLower(name);
  absl::StrReplaceAll({{"_", "-"}}, &name);
  return name;
}

int32_t TotalRounds(const v1::JobStatus& st) {
  const v1::JobSpec& spec = st.spec();
  return spec.setting() == v1::SETTING_HFL_SYNSGD ? spec.rounds() * std::max(1, spec.local_iters())
                                                  : spec.rounds();
}

std::vector<plot::LineChart> JobRoundCharts(const v1::JobStatus& st) {
  plot::LineChart mse{"mse",
                      "test MSE per party (opt-in reports)",
                      "round (marked: the final model)",
                      "test MSE",
                      {}};
  // The final model (after Stage 3) one round after the last recorded one.
  int32_t last = 0;
  for (const v1::RoundRecord& r : st.rounds()) last = std::max(last, r.round() + 1);
  if (last == 0) last = TotalRounds(st);
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
    if (p.test_count() > 0 && p.test_mse() >= 0) m.final_point = {{last + 1, p.test_mse()}};
    if (!m.points.empty() || m.final_point) mse.series.push_back(std::move(m));
    if (!e.points.empty()) eps.series.push_back(std::move(e));
  }
  for (const v1::RoundRecord& r : st.rounds()) {
    secs.series[0].points.emplace_back(r.round() + 1, r.seconds());
  }
  return {mse, eps, secs};
}

}  // namespace fedmf::net
