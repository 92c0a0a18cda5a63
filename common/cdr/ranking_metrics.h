// Leave-one-out ranking metrics of the paper's protocol: the held-out positive
// is ranked among its sampled negatives by the model's scores. (common/mf/ranking.h
// is the other protocol: top k over the whole catalogue, several relevant items.)
#ifndef FEDMF_COMMON_CDR_RANKING_METRICS_H_
#define FEDMF_COMMON_CDR_RANKING_METRICS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/cdr/cross_domain_data.h"

namespace fedmf::cdr {

struct RankingMetrics {
  double hr_at_5 = 0;
  double hr_at_10 = 0;
  double ndcg_at_5 = 0;
  double ndcg_at_10 = 0;
  double mrr = 0;  // 1 / rank over the whole list (positive + negatives), no cut-off
  int64_t cases = 0;
};

// The positive's 1-based rank: 1 + the number of negatives scoring at least
// as high. Ties count against the positive (pessimistic), so a constant
// model ranks last rather than first.
int32_t RankOfPositive(double positive_score, std::span<const double> negative_scores);

// Means over `cases` of HR@k = [rank <= k], NDCG@k = [rank <= k] / log2(rank + 1)
// and MRR = 1 / rank. `score(user, item)` scores a target item for a user.
RankingMetrics EvaluateRanking(const std::vector<EvalCase>& cases,
                               const std::function<double(int32_t, int32_t)>& score);

}  // namespace fedmf::cdr

#endif  // FEDMF_COMMON_CDR_RANKING_METRICS_H_
