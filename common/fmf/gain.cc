#include "common/fmf/gain.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"

namespace fedmf::fmf {

std::optional<double> GainCaptured(double mse_local, double mse_federated, double mse_central) {
  if (!std::isfinite(mse_local) || !std::isfinite(mse_federated) || !std::isfinite(mse_central)) {
    return std::nullopt;
  }
  const double room = mse_local - mse_central;
  if (!(room > 0)) return std::nullopt;
  return (mse_local - mse_federated) / room;
}

double StudentT975(int32_t dof) {
  static constexpr double kTable[] = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (dof < 1) return std::numeric_limits<double>::quiet_NaN();
  if (dof <= 30) return kTable[dof - 1];
  // Cornish-Fisher expansion around z = 1.959964 (error < 1e-4 beyond 30).
  const double z = 1.959964;
  const double n = dof;
  return z + (z * z * z + z) / (4 * n) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

GainSummary SummarizeGains(const std::vector<std::optional<double>>& gains) {
  GainSummary s;
  double sum = 0;
  for (const auto& g : gains) {
    if (!g) continue;
    sum += *g;
    ++s.count;
  }
  if (s.count == 0) {
    s.mean = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.mean = sum / s.count;
  if (s.count < 2) return s;
  double sq = 0;
  for (const auto& g : gains) {
    if (g) sq += (*g - s.mean) * (*g - s.mean);
  }
  s.sd = std::sqrt(sq / (s.count - 1));
  const double half = StudentT975(s.count - 1) * *s.sd / std::sqrt(static_cast<double>(s.count));
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  return s;
}

GainVerdict JudgeGain(const GainSummary& summary) {
  if (summary.count == 0 || std::isnan(summary.mean)) return GainVerdict::kUndefined;
  if (!summary.ci95_low || !summary.ci95_high) return GainVerdict::kNotDistinguishable;
  if (*summary.ci95_low > 0) return GainVerdict::kHelps;
  if (*summary.ci95_high < 0) return GainVerdict::kHurts;
  return GainVerdict::kNotDistinguishable;
}

const char* GainVerdictName(GainVerdict verdict) {
  switch (verdict) {
    case GainVerdict::kHelps: return "helps";
    case GainVerdict::kHurts: return "hurts";
    case GainVerdict::kNotDistinguishable: return "not distinguishable";
    case GainVerdict::kUndefined: break;
  }
  return "undefined";
}

std::string GainVerdictSentence(const GainSummary& summary) {
  const std::string repeats =
      absl::StrCat(summary.count, summary.count == 1 ? " repeat" : " repeats");
  if (JudgeGain(summary) == GainVerdict::kUndefined) {
    return "gain undefined: pooling the data does no better than training alone";
  }
  if (!summary.ci95_low) {
    return absl::StrCat("not distinguishable from training alone with ", repeats,
                        ": no spread measured (give --repeats 3 or more)");
  }
  const std::string interval = absl::StrFormat("the 95%% interval [%.1f%%, %.1f%%]",
                                               100 * *summary.ci95_low, 100 * *summary.ci95_high);
  switch (JudgeGain(summary)) {
    case GainVerdict::kHelps:
      return absl::StrCat("joining helps: ", interval, " lies above 0 (", repeats, ")");
    case GainVerdict::kHurts:
      return absl::StrCat("joining hurts: ", interval, " lies below 0 (", repeats, ")");
    default:
      return absl::StrCat("not distinguishable from training alone with ", repeats, ": ", interval,
                          " contains 0");
  }
}

absl::StatusOr<data::Federation> PoolFederation(const data::Federation& federation) {
  if (federation.parties.empty()) return absl::InvalidArgumentError("federation has no parties");
  data::Federation pooled;
  pooled.num_users = federation.num_users;
  pooled.num_items = federation.num_items;
  pooled.range = federation.range;
  data::PartyData all;
  all.party = 0;
  all.range = federation.range;
  all.global_users = data::IndexMap::Identity(federation.num_users);
  all.global_items = data::IndexMap::Identity(federation.num_items);
  for (const data::PartyData& p : federation.parties) {
    for (auto [in, out] : {std::pair{&p.train, &all.train}, std::pair{&p.test, &all.test}}) {
      ASSIGN_OR_RETURN(std::vector<data::Rating> global,
                       data::ToGlobalIndices(p, *in, pooled.num_users, pooled.num_items));
      out->insert(out->end(), global.begin(), global.end());
    }
  }
  auto by_key = [](const data::Rating& a, const data::Rating& b) {
    return a.user != b.user ? a.user < b.user : a.item < b.item;
  };
  std::sort(all.train.begin(), all.train.end(), by_key);
  std::sort(all.test.begin(), all.test.end(), by_key);
  pooled.parties.push_back(std::move(all));
  return pooled;
}

}  // namespace fedmf::fmf
