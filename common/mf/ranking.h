// Top-N quality on held-out ratings (HR, NDCG, precision and recall at k),
// the most-popular baseline, and the rule recommendations are ranked by: the
// model's prediction pulled toward the mean for items with few ratings and
// nudged by popularity, with its two weights chosen on validation ratings.
// Why: a model fit for squared error ranks items with a handful of high
// ratings first (issue 56: a top 10 led by items with 4 ratings at 4.3), and
// loses to "most popular" on every top-N metric (Cremonesi, Koren, Turrin,
// RecSys 2010). Pure: no I/O, deterministic for any thread count.
#ifndef FEDMF_COMMON_MF_RANKING_H_
#define FEDMF_COMMON_MF_RANKING_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "common/data/ratings.h"
#include "common/mf/embeddings.h"

namespace fedmf::mf {

struct RankingOptions {
  int32_t k = 10;
  // A held-out rating at or above this (in the units the ratings are stored
  // in) is relevant: a user liked the item.
  double relevant_min = 4;
  int threads = 1;
};

struct RankingMetrics {
  int32_t k = 10;
  // Users with at least one relevant held-out rating: the ones measured.
  int64_t users = 0;
  double hit_rate = 0;   // share of users with a relevant item in their top k
  double ndcg = 0;       // binary relevance, ideal = all relevant items first
  double precision = 0;  // relevant items in the top k / k
  double recall = 0;     // relevant items in the top k / the user's relevant items
};

// Fills scores[j] for every item j (scores has num_items entries) for
// `user`; higher is better. Called from several threads at once.
using UserScorer = std::function<void(int32_t user, std::vector<double>& scores)>;

// Each measured user's top k among the items it has no `known` rating for
// (ties to the smaller item id), against its relevant `held_out` ratings.
RankingMetrics EvaluateRanking(const std::vector<data::Rating>& known,
                               const std::vector<data::Rating>& held_out, int32_t num_users,
                               int32_t num_items, const UserScorer& score,
                               const RankingOptions& options);

// The parts' metrics averaged with their measured users as weights.
RankingMetrics CombineRanking(const std::vector<RankingMetrics>& parts);

// Per item, how many of `ratings` it has.
std::vector<int32_t> ItemSupport(const std::vector<data::Rating>& ratings, int32_t num_items);

// score = mean + (prediction - mean) * n / (n + shrinkage)
//         + popularity_weight * log(1 + n),   n = the item's support.
// {0, 0} ranks by the prediction alone; a large popularity_weight is "most
// popular" with the prediction breaking ties.
struct RankingRule {
  double shrinkage = 0;
  double popularity_weight = 0;
  double mean = 0;  // of the ratings the model was fit on
  bool operator==(const RankingRule&) const = default;
};
double RankingScore(const RankingRule& rule, double prediction, int32_t support);

// <u_user, v_j> under `rule` (unclamped: clamping ties the top items).
UserScorer ModelScorer(const Matrix& u, const Matrix& v, const std::vector<int32_t>& support,
                       const RankingRule& rule);
// Most popular: the support alone.
UserScorer PopularityScorer(const std::vector<int32_t>& support);

// The rule for a model with no validation ratings to choose one on:
// shrinkage 20, popularity weight 1 (the middle of the rules validation chose
// for ML-100K's HFL parties, docs/results.md section ranking), and the mean
// of `known`.
RankingRule DefaultRankingRule(const std::vector<data::Rating>& known);

// The rule of the grid (shrinkage x popularity weight, pure prediction and
// near-pure popularity included) with the highest NDCG@k on `validation`,
// candidates excluding `known` (the ratings the model was fit on, whose
// support and mean the rule uses). Ties go to the earlier, simpler rule.
// Validation ratings must not have been fit on: the choice then measures
// how far the model's ranking can be trusted.
RankingRule ChooseRankingRule(const Matrix& u, const Matrix& v,
                              const std::vector<data::Rating>& known,
                              const std::vector<data::Rating>& validation,
                              const RankingOptions& options);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_RANKING_H_
