#include "common/mf/ranking.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/base/parallel_for.h"

namespace fedmf::mf {
namespace {

// Ratings grouped by user: offsets into an item list (CSR).
struct ByUser {
  std::vector<int64_t> start;
  std::vector<int32_t> items;
};

ByUser GroupByUser(const std::vector<data::Rating>& ratings, int32_t num_users,
                   const std::function<bool(const data::Rating&)>& keep) {
  ByUser g;
  g.start.assign(static_cast<size_t>(num_users) + 1, 0);
  for (const data::Rating& r : ratings) {
    if (r.user >= 0 && r.user < num_users && keep(r)) ++g.start[r.user + 1];
  }
  std::partial_sum(g.start.begin(), g.start.end(), g.start.begin());
  g.items.resize(static_cast<size_t>(g.start.back()));
  std::vector<int64_t> fill(g.start.begin(), g.start.end() - 1);
  for (const data::Rating& r : ratings) {
    if (r.user >= 0 && r.user < num_users && keep(r)) g.items[fill[r.user]++] = r.item;
  }
  return g;
}

// Sums over users -> means.
void DivideByUsers(RankingMetrics& m) {
  if (m.users == 0) return;
  const double n = static_cast<double>(m.users);
  m.hit_rate /= n;
  m.ndcg /= n;
  m.precision /= n;
  m.recall /= n;
}

// A rule as score_j = offset_j + slope_j * prediction_j, for every item.
struct RuleTerms {
  std::vector<double> offset, slope;
};

RuleTerms TermsOf(const RankingRule& rule, const std::vector<int32_t>& support) {
  RuleTerms t;
  t.offset.resize(support.size());
  t.slope.resize(support.size());
  for (size_t j = 0; j < support.size(); ++j) {
    const double n = static_cast<double>(std::max(support[j], 0));
    t.slope[j] = rule.shrinkage > 0 ? n / (n + rule.shrinkage) : 1.0;
    t.offset[j] = rule.mean * (1 - t.slope[j]) + rule.popularity_weight * std::log1p(n);
  }
  return t;
}

struct UserOutcome {
  bool counted = false;  // had a relevant item it could be recommended
  double hit = 0, dcg_ratio = 0, precision = 0, recall = 0;
};

// One user's outcome for `scores` (all items), candidates = items not
// `excluded`; `relevant` marks its relevant items that are candidates.
UserOutcome RankOne(const std::vector<double>& scores, const std::vector<char>& excluded,
                    const std::vector<char>& relevant, int64_t relevant_count, size_t k,
                    std::vector<int32_t>& candidates) {
  if (relevant_count == 0) return {};
  candidates.clear();
  for (int32_t j = 0; j < static_cast<int32_t>(scores.size()); ++j) {
    if (!excluded[j]) candidates.push_back(j);
  }
  const size_t n = std::min(k, candidates.size());
  std::partial_sort(
      candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(n), candidates.end(),
      [&](int32_t a, int32_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; });
  double hits = 0, dcg = 0, idcg = 0;
  for (size_t r = 0; r < n; ++r) {
    if (relevant[candidates[r]]) {
      hits += 1;
      dcg += 1.0 / std::log2(static_cast<double>(r) + 2.0);
    }
  }
  for (size_t r = 0; r < std::min<size_t>(k, static_cast<size_t>(relevant_count)); ++r) {
    idcg += 1.0 / std::log2(static_cast<double>(r) + 2.0);
  }
  return {true, hits > 0 ? 1.0 : 0.0, dcg / idcg, hits / static_cast<double>(k),
          hits / static_cast<double>(relevant_count)};
}

// A user's known items and its relevant held-out items that are not known.
struct UserSets {
  std::vector<char> excluded, relevant;
  int64_t relevant_count = 0;
};

UserSets SetsOf(const ByUser& seen, const ByUser& liked, int32_t u, int32_t num_items) {
  UserSets s;
  s.excluded.assign(static_cast<size_t>(num_items), 0);
  s.relevant.assign(static_cast<size_t>(num_items), 0);
  for (int64_t p = seen.start[u]; p < seen.start[u + 1]; ++p) {
    if (seen.items[p] >= 0 && seen.items[p] < num_items) s.excluded[seen.items[p]] = 1;
  }
  // A relevant item the user also has a known rating for cannot be
  // recommended; it does not count against the model.
  for (int64_t p = liked.start[u]; p < liked.start[u + 1]; ++p) {
    const int32_t j = liked.items[p];
    if (!s.excluded[j] && !s.relevant[j]) {
      s.relevant[j] = 1;
      ++s.relevant_count;
    }
  }
  return s;
}

RankingMetrics Average(const std::vector<UserOutcome>& outcome, int32_t k) {
  RankingMetrics m;
  m.k = k;
  for (const UserOutcome& o : outcome) {
    if (!o.counted) continue;
    ++m.users;
    m.hit_rate += o.hit;
    m.ndcg += o.dcg_ratio;
    m.precision += o.precision;
    m.recall += o.recall;
  }
  DivideByUsers(m);
  return m;
}

// The users with a relevant held-out rating, and the groupings.
struct Prepared {
  ByUser seen, liked;
  std::vector<int32_t> measured;
};

Prepared Prepare(const std::vector<data::Rating>& known, const std::vector<data::Rating>& held_out,
                 int32_t num_users, int32_t num_items, double relevant_min) {
  Prepared p;
  p.seen = GroupByUser(known, num_users, [](const data::Rating&) { return true; });
  p.liked = GroupByUser(held_out, num_users, [&](const data::Rating& r) {
    return r.item >= 0 && r.item < num_items && r.value >= relevant_min;
  });
  for (int32_t u = 0; u < num_users; ++u) {
    if (p.liked.start[u + 1] > p.liked.start[u]) p.measured.push_back(u);
  }
  return p;
}

}  // namespace

RankingMetrics EvaluateRanking(const std::vector<data::Rating>& known,
                               const std::vector<data::Rating>& held_out, int32_t num_users,
                               int32_t num_items, const UserScorer& score,
                               const RankingOptions& options) {
  if (num_users <= 0 || num_items <= 0 || options.k < 1) return RankingMetrics{options.k};
  const Prepared p = Prepare(known, held_out, num_users, num_items, options.relevant_min);
  std::vector<UserOutcome> outcome(p.measured.size());
  base::ParallelFor(p.measured.size(), options.threads, [&](size_t i) {
    const int32_t u = p.measured[i];
    std::vector<double> scores(static_cast<size_t>(num_items), 0.0);
    score(u, scores);
    const UserSets sets = SetsOf(p.seen, p.liked, u, num_items);
    std::vector<int32_t> candidates;
    outcome[i] = RankOne(scores, sets.excluded, sets.relevant, sets.relevant_count,
                         static_cast<size_t>(options.k), candidates);
  });
  return Average(outcome, options.k);
}

RankingMetrics CombineRanking(const std::vector<RankingMetrics>& parts) {
  RankingMetrics m;
  if (!parts.empty()) m.k = parts[0].k;
  for (const RankingMetrics& p : parts) {
    const double w = static_cast<double>(p.users);
    m.users += p.users;
    m.hit_rate += w * p.hit_rate;
    m.ndcg += w * p.ndcg;
    m.precision += w * p.precision;
    m.recall += w * p.recall;
  }
  DivideByUsers(m);
  return m;
}

std::vector<int32_t> ItemSupport(const std::vector<data::Rating>& ratings, int32_t num_items) {
  std::vector<int32_t> support(static_cast<size_t>(std::max(num_items, 0)), 0);
  for (const data::Rating& r : ratings) {
    if (r.item >= 0 && r.item < num_items) ++support[r.item];
  }
  return support;
}

double RankingScore(const RankingRule& rule, double prediction, int32_t support) {
  const double n = static_cast<double>(std::max(support, 0));
  const double trust = rule.shrinkage > 0 ? n / (n + rule.shrinkage) : 1.0;
  return rule.mean + (prediction - rule.mean) * trust + rule.popularity_weight * std::log1p(n);
}

UserScorer ModelScorer(const Matrix& u, const Matrix& v, const std::vector<int32_t>& support,
                       const RankingRule& rule) {
  // The rule's per-item terms once, not per user.
  RuleTerms terms = TermsOf(rule, support);
  return [&u, &v, terms = std::move(terms)](int32_t user, std::vector<double>& scores) {
    const auto row = u.row(user);
    for (size_t j = 0; j < scores.size(); ++j) {
      const double prediction = row.dot(v.row(static_cast<Eigen::Index>(j)));
      scores[j] =
          j < terms.offset.size() ? terms.offset[j] + terms.slope[j] * prediction : prediction;
    }
  };
}

UserScorer PopularityScorer(const std::vector<int32_t>& support) {
  return [&support](int32_t, std::vector<double>& scores) {
    for (size_t j = 0; j < scores.size(); ++j) {
      scores[j] = j < support.size() ? support[j] : 0;
    }
  };
}

namespace {
double MeanOf(const std::vector<data::Rating>& ratings) {
  double mean = 0;
  for (const data::Rating& r : ratings) mean += r.value;
  return ratings.empty() ? 0.0 : mean / static_cast<double>(ratings.size());
}
}  // namespace

RankingRule DefaultRankingRule(const std::vector<data::Rating>& known) {
  return {20.0, 1.0, MeanOf(known)};
}

RankingRule ChooseRankingRule(const Matrix& u, const Matrix& v,
                              const std::vector<data::Rating>& known,
                              const std::vector<data::Rating>& validation,
                              const RankingOptions& options) {
  const int32_t num_items = static_cast<int32_t>(v.rows());
  const int32_t num_users = static_cast<int32_t>(u.rows());
  const std::vector<int32_t> support = ItemSupport(known, num_items);
  const double mean = MeanOf(known);
  // Pure prediction first (the simplest rule wins ties), near-pure
  // popularity last.
  std::vector<RankingRule> rules;
  for (const double weight : {0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.5, 100.0}) {
    for (const double shrinkage : {0.0, 5.0, 20.0, 50.0})
      rules.push_back({shrinkage, weight, mean});
  }
  if (num_users <= 0 || num_items <= 0 || options.k < 1) return rules[0];
  Prepared p = Prepare(known, validation, num_users, num_items, options.relevant_min);
  // At most kMaxChoiceUsers users, evenly spread: the choice costs one
  // prediction per item for each, whatever the data set's size.
  constexpr size_t kMaxChoiceUsers = 2000;
  if (p.measured.size() > kMaxChoiceUsers) {
    std::vector<int32_t> kept;
    for (size_t i = 0; i < kMaxChoiceUsers; ++i) {
      kept.push_back(p.measured[i * p.measured.size() / kMaxChoiceUsers]);
    }
    p.measured = std::move(kept);
  }
  std::vector<RuleTerms> terms;
  for (const RankingRule& rule : rules) terms.push_back(TermsOf(rule, support));
  // outcome[rule][user]
  std::vector<std::vector<UserOutcome>> outcome(rules.size(),
                                                std::vector<UserOutcome>(p.measured.size()));
  base::ParallelFor(p.measured.size(), options.threads, [&](size_t i) {
    const int32_t user = p.measured[i];
    const UserSets sets = SetsOf(p.seen, p.liked, user, num_items);
    std::vector<double> prediction(static_cast<size_t>(num_items)), scores(prediction.size());
    for (int32_t j = 0; j < num_items; ++j) prediction[j] = u.row(user).dot(v.row(j));
    std::vector<int32_t> candidates;
    for (size_t r = 0; r < rules.size(); ++r) {
      for (int32_t j = 0; j < num_items; ++j) {
        scores[j] = terms[r].offset[j] + terms[r].slope[j] * prediction[j];
      }
      outcome[r][i] = RankOne(scores, sets.excluded, sets.relevant, sets.relevant_count,
                              static_cast<size_t>(options.k), candidates);
    }
  });
  RankingRule best = rules[0];
  double best_ndcg = -1;
  for (size_t r = 0; r < rules.size(); ++r) {
    const RankingMetrics m = Average(outcome[r], options.k);
    if (m.users > 0 && m.ndcg > best_ndcg) {
      best_ndcg = m.ndcg;
      best = rules[r];
    }
  }
  return best;
}

}  // namespace fedmf::mf
