#include "common/cdr/ranking_metrics.h"

#include <cmath>

namespace fedmf::cdr {

int32_t RankOfPositive(double positive_score, std::span<const double> negative_scores) {
  int32_t rank = 1;
  for (double s : negative_scores) {
    if (!(s < positive_score)) ++rank;  // NaN scores count against the positive too
  }
  return rank;
}

RankingMetrics EvaluateRanking(const std::vector<EvalCase>& cases,
                               const std::function<double(int32_t, int32_t)>& score) {
  RankingMetrics m;
  std::vector<double> negatives;
  for (const EvalCase& c : cases) {
    negatives.clear();
    for (int32_t j : c.negatives) negatives.push_back(score(c.user, j));
    const int32_t rank = RankOfPositive(score(c.user, c.positive), negatives);
    const double gain = 1.0 / std::log2(rank + 1.0);
    if (rank <= 5) {
      m.hr_at_5 += 1;
      m.ndcg_at_5 += gain;
    }
    if (rank <= 10) {
      m.hr_at_10 += 1;
      m.ndcg_at_10 += gain;
    }
    m.mrr += 1.0 / rank;
    ++m.cases;
  }
  if (m.cases > 0) {
    const double n = static_cast<double>(m.cases);
    m.hr_at_5 /= n;
    m.hr_at_10 /= n;
    m.ndcg_at_5 /= n;
    m.ndcg_at_10 /= n;
    m.mrr /= n;
  }
  return m;
}

}  // namespace fedmf::cdr
