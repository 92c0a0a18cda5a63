#include "common/cdr/cross_domain_data.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "common/random/csprng.h"

namespace fedmf::cdr {

std::vector<bool> AssignSourceDomain(const std::vector<std::vector<int>>& item_genres,
                                     const std::vector<int>& source_genres) {
  std::vector<bool> out(item_genres.size(), false);
  for (size_t i = 0; i < item_genres.size(); ++i) {
    for (int g : item_genres[i]) {
      if (std::find(source_genres.begin(), source_genres.end(), g) != source_genres.end()) {
        out[i] = true;
      }
    }
  }
  return out;
}

namespace {

// Keeps users with >= k positives in both domains and items with >= k
// positives, until a pass removes nothing.
void FilterToFixpoint(const data::Dataset& d, const std::vector<bool>& is_source,
                      const std::vector<bool>& positive, int32_t k, std::vector<bool>& user_kept,
                      std::vector<bool>& item_kept) {
  user_kept.assign(d.num_users, true);
  item_kept.assign(d.num_items, true);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<int32_t> user_source(d.num_users, 0), user_target(d.num_users, 0),
        item_count(d.num_items, 0);
    for (size_t r = 0; r < d.ratings.size(); ++r) {
      const data::Rating& x = d.ratings[r];
      if (!positive[r] || !user_kept[x.user] || !item_kept[x.item]) continue;
      (is_source[x.item] ? user_source : user_target)[x.user]++;
      item_count[x.item]++;
    }
    for (int32_t u = 0; u < d.num_users; ++u) {
      if (user_kept[u] && (user_source[u] < k || user_target[u] < k)) {
        user_kept[u] = false;
        changed = true;
      }
    }
    for (int32_t i = 0; i < d.num_items; ++i) {
      if (item_kept[i] && item_count[i] < k) {
        item_kept[i] = false;
        changed = true;
      }
    }
  }
}

}  // namespace

absl::StatusOr<CrossDomainData> BuildCrossDomainData(const data::Dataset& d,
                                                     const std::vector<bool>& is_source_item,
                                                     const CrossDomainOptions& options) {
  if (is_source_item.size() != static_cast<size_t>(d.num_items)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("domain assignment covers %d items, the data set has %d",
                        is_source_item.size(), d.num_items));
  }
  if (options.min_interactions < 2 || options.num_negatives < 1 || options.max_target_train < 0) {
    return absl::InvalidArgumentError(
        "cross-domain split: min_interactions must be >= 2 (two positives are held out per "
        "user), num_negatives >= 1 and max_target_train >= 0");
  }
  std::vector<bool> positive(d.ratings.size());
  for (size_t r = 0; r < d.ratings.size(); ++r) {
    positive[r] = d.ratings[r].value >= options.positive_threshold;
  }
  std::vector<bool> user_kept, item_kept;
  FilterToFixpoint(d, is_source_item, positive, options.min_interactions, user_kept, item_kept);

  CrossDomainData out;
  std::vector<int32_t> user_index(d.num_users, -1), item_index(d.num_items, -1);
  for (int32_t u = 0; u < d.num_users; ++u) {
    if (!user_kept[u]) continue;
    user_index[u] = out.num_users++;
    out.user_ids.push_back(u < static_cast<int32_t>(d.user_ids.size()) ? d.user_ids[u]
                                                                       : std::to_string(u));
  }
  for (int32_t i = 0; i < d.num_items; ++i) {
    if (!item_kept[i]) continue;
    const std::string id =
        i < static_cast<int32_t>(d.item_ids.size()) ? d.item_ids[i] : std::to_string(i);
    if (is_source_item[i]) {
      item_index[i] = out.num_source_items++;
      out.source_item_ids.push_back(id);
    } else {
      item_index[i] = out.num_target_items++;
      out.target_item_ids.push_back(id);
    }
  }
  if (out.num_users == 0 || out.num_source_items == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: no user has %d positive ratings (>= %g) in both domains; the cross-domain split "
        "needs users active in both genre domains",
        d.source, options.min_interactions, options.positive_threshold));
  }
  if (out.num_target_items < options.num_negatives + 2) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the target domain keeps %d items, too few to sample %d negatives per held-out item",
        d.source, out.num_target_items, options.num_negatives));
  }

  out.source.resize(out.num_users);
  out.target_train.resize(out.num_users);
  std::vector<absl::flat_hash_set<int32_t>> target_rated(out.num_users);
  for (size_t r = 0; r < d.ratings.size(); ++r) {
    const data::Rating& x = d.ratings[r];
    const int32_t u = user_index[x.user];
    if (u < 0) continue;
    // Any rating of a target item (kept or not) makes it "rated" for the negatives.
    const int32_t i = item_index[x.item];
    if (i < 0) continue;
    if (is_source_item[x.item]) {
      if (positive[r]) out.source[u].push_back(i);
    } else {
      target_rated[u].insert(i);
      if (positive[r]) out.target_train[u].push_back(i);
    }
  }
  random::Csprng rng = random::Csprng::FromSeed(options.seed).Fork("cdr/leave-one-out");
  // Its own stream, so a sparser target keeps the same held-out items.
  random::Csprng sparsify = random::Csprng::FromSeed(options.seed).Fork("cdr/sparsify");
  for (int32_t u = 0; u < out.num_users; ++u) {
    auto& s = out.source[u];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    auto& t = out.target_train[u];
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    if (out.num_target_items - static_cast<int32_t>(target_rated[u].size()) <
        2 * options.num_negatives) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: user %s rated all but %d target items; %d negatives per held-out item need more",
          d.source, out.user_ids[u], out.num_target_items - target_rated[u].size(),
          options.num_negatives));
    }
    absl::flat_hash_set<int32_t> drawn;
    auto hold_out = [&](std::vector<EvalCase>& cases) {
      const size_t pick = rng.UniformInt(t.size());
      EvalCase c;
      c.user = u;
      c.positive = t[pick];
      t.erase(t.begin() + static_cast<std::ptrdiff_t>(pick));
      while (static_cast<int32_t>(c.negatives.size()) < options.num_negatives) {
        const auto j = static_cast<int32_t>(rng.UniformInt(out.num_target_items));
        if (target_rated[u].contains(j) || drawn.contains(j)) continue;
        drawn.insert(j);
        c.negatives.push_back(j);
      }
      cases.push_back(std::move(c));
    };
    hold_out(out.test);
    hold_out(out.validation);
    if (options.max_target_train > 0 && static_cast<int32_t>(t.size()) > options.max_target_train) {
      std::shuffle(t.begin(), t.end(), sparsify);
      t.resize(static_cast<size_t>(options.max_target_train));
      std::sort(t.begin(), t.end());
    }
  }
  return out;
}

}  // namespace fedmf::cdr
