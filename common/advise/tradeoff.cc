#include "common/advise/tradeoff.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/data/synthetic.h"
#include "common/fmf/simulator.h"

namespace fedmf::advise {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool Horizontal(fmf::Setting setting) {
  return setting == fmf::Setting::kHfl || setting == fmf::Setting::kHflSynSgd;
}

absl::Status CheckSetting(fmf::Setting setting) {
  if (Horizontal(setting) || setting == fmf::Setting::kVfl) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("setting ", fmf::SettingName(setting),
                   " is not a two-party collaboration; use hfl, hfl-synsgd or vfl"));
}

// Dense index of `id` in `ids`, appending it when new.
int32_t Intern(const std::string& id, absl::flat_hash_map<std::string, int32_t>& index,
               std::vector<std::string>& ids) {
  auto [it, inserted] = index.try_emplace(id, static_cast<int32_t>(ids.size()));
  if (inserted) ids.push_back(id);
  return it->second;
}

}  // namespace

absl::StatusOr<data::Federation> JoinParties(const data::Dataset& a, const data::Dataset& b,
                                             fmf::Setting setting,
                                             const data::SplitOptions& split) {
  RETURN_IF_ERROR(CheckSetting(setting));
  if (a.range.min != b.range.min || a.range.max != b.range.max) {
    return absl::InvalidArgumentError(
        absl::StrCat("party 1 (", a.source, ") declares ratings in [", a.range.min, ", ",
                     a.range.max, "] but party 2 (", b.source, ") in [", b.range.min, ", ",
                     b.range.max, "]; both parties must declare the same rating range"));
  }
  // The parties' own axis is kept apart (prefixed with the party); the shared
  // axis is joined by id.
  const bool hfl = Horizontal(setting);
  data::Dataset joined;
  joined.range = a.range;
  joined.source = absl::StrCat(a.source, " + ", b.source);
  absl::flat_hash_map<std::string, int32_t> own_index, shared_index;
  std::vector<std::string> own_ids, shared_ids;
  std::vector<int32_t> owner;
  const data::Dataset* parties[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    const data::Dataset& d = *parties[k];
    const std::vector<std::string>& own = hfl ? d.user_ids : d.item_ids;
    const std::vector<std::string>& shared = hfl ? d.item_ids : d.user_ids;
    std::vector<int32_t> own_map(own.size()), shared_map(shared.size());
    for (size_t e = 0; e < own.size(); ++e) {
      own_map[e] = Intern(absl::StrCat(k + 1, "/", own[e]), own_index, own_ids);
      if (static_cast<size_t>(own_map[e]) == owner.size()) owner.push_back(k);
    }
    for (size_t e = 0; e < shared.size(); ++e) {
      shared_map[e] = Intern(shared[e], shared_index, shared_ids);
    }
    for (const data::Rating& r : d.ratings) {
      const int32_t own_e = hfl ? r.user : r.item;
      const int32_t shared_e = hfl ? r.item : r.user;
      if (own_e < 0 || static_cast<size_t>(own_e) >= own_map.size() || shared_e < 0 ||
          static_cast<size_t>(shared_e) >= shared_map.size()) {
        return absl::InvalidArgumentError(absl::StrCat(d.source, ": a rating refers to user ",
                                                       r.user, " / item ", r.item,
                                                       " outside the dataset's ids"));
      }
      joined.ratings.push_back(hfl ? data::Rating{own_map[own_e], shared_map[shared_e], r.value}
                                   : data::Rating{shared_map[shared_e], own_map[own_e], r.value});
    }
  }
  joined.user_ids = hfl ? own_ids : shared_ids;
  joined.item_ids = hfl ? shared_ids : own_ids;
  joined.num_users = static_cast<int32_t>(joined.user_ids.size());
  joined.num_items = static_cast<int32_t>(joined.item_ids.size());
  return data::PartitionByOwner(joined, hfl ? data::OwnedAxis::kUsers : data::OwnedAxis::kItems,
                                std::move(owner), 2, split);
}

absl::StatusOr<data::Federation> SelfDivision(const data::Dataset& own, fmf::Setting setting,
                                              const data::SplitOptions& split) {
  RETURN_IF_ERROR(CheckSetting(setting));
  return Horizontal(setting) ? data::PartitionHfl(own, 2, split)
                             : data::PartitionVflRandom(own, 2, split);
}

absl::StatusOr<data::Federation> ProxyFederation(const data::Dataset& a, const data::Dataset& b,
                                                 fmf::Setting setting,
                                                 const data::SplitOptions& split, uint64_t seed) {
  RETURN_IF_ERROR(CheckSetting(setting));
  if (a.range.min != b.range.min || a.range.max != b.range.max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "party 1 declares ratings in [", a.range.min, ", ", a.range.max, "] but party 2 in [",
        b.range.min, ", ", b.range.max, "]; both parties must declare the same rating range"));
  }
  // One generator for both (the same latent items for HFL, the same latent
  // users for VFL, as real partners share them), cut along the parties' axis.
  const bool hfl = Horizontal(setting);
  data::SyntheticOptions o;
  o.num_users = hfl ? a.num_users + b.num_users : std::max(a.num_users, b.num_users);
  o.num_items = hfl ? std::max(a.num_items, b.num_items) : a.num_items + b.num_items;
  o.density = std::min(1.0, static_cast<double>(a.ratings.size() + b.ratings.size()) /
                                (static_cast<double>(o.num_users) * o.num_items));
  o.range = a.range;
  o.seed = seed;
  auto proxy = data::GenerateSynthetic(o);
  if (!proxy.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no synthetic proxy of the parties' shape (", o.num_users, " users, ",
                     o.num_items, " items, density ", o.density, "): ", proxy.status().message()));
  }
  const int32_t first = hfl ? a.num_users : a.num_items;
  std::vector<int32_t> owner(hfl ? o.num_users : o.num_items);
  for (size_t e = 0; e < owner.size(); ++e) owner[e] = static_cast<int32_t>(e) < first ? 0 : 1;
  return data::PartitionByOwner(*proxy, hfl ? data::OwnedAxis::kUsers : data::OwnedAxis::kItems,
                                std::move(owner), 2, split);
}

absl::StatusOr<Measurement> MeasureTradeoff(const data::Federation& federation,
                                            const MeasureOptions& options,
                                            const MeasureProgress& progress) {
  if (federation.parties.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("the CoL game has two players; the federation has ", federation.parties.size(),
                     " parties"));
  }
  RETURN_IF_ERROR(CheckSetting(options.job.setting));
  if (options.epsilons.empty()) {
    return absl::InvalidArgumentError("the epsilon grid is empty; give at least one epsilon > 0");
  }
  Measurement m;
  std::vector<Action>& actions = m.table.actions;
  actions.push_back({false, kInf});
  for (double e : options.epsilons) {
    if (!(e > 0) || std::isinf(e)) {
      return absl::InvalidArgumentError(
          absl::StrCat("grid epsilon ", e, " must be finite and > 0 (inf is always measured)"));
    }
    actions.push_back({false, e});
  }
  // Least private first, then "alone".
  std::sort(actions.begin(), actions.end(),
            [](const Action& x, const Action& y) { return PrivacyLevel(x) < PrivacyLevel(y); });
  actions.push_back({true, 0});
  const size_t k = actions.size();
  const size_t alone = k - 1;
  for (int n = 0; n < 2; ++n) {
    m.table.error[n].assign(k, std::vector<double>(k, 0.0));
  }
  const int total = static_cast<int>(alone * alone + 1);
  int done = 0;
  for (size_t i = 0; i < alone; ++i) {
    for (size_t j = 0; j < alone; ++j) {
      const auto start = std::chrono::steady_clock::now();
      auto r = fmf::SimulateWithPartyEpsilons(options.job, federation,
                                              {actions[i].epsilon, actions[j].epsilon});
      if (!r.ok()) {
        return absl::Status(r.status().code(),
                            absl::StrCat("cell (", ActionLabel(actions[i]), ", ",
                                         ActionLabel(actions[j]), "): ", r.status().message()));
      }
      CellRun run;
      run.action[0] = actions[i];
      run.action[1] = actions[j];
      for (int n = 0; n < 2; ++n) {
        run.error[n] = r->parties[n].test.rmse;
        run.epsilon_spent[n] = r->parties[n].epsilon;
        m.table.error[n][i][j] = run.error[n];
        m.total_epsilon[n] += run.epsilon_spent[n];
      }
      run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      m.runs.push_back(run);
      if (progress) progress(run, ++done, total);
    }
  }
  // Alone: each party trains on its own ratings without noise; nothing
  // leaves it, so this costs no privacy.
  fmf::JobConfig local = options.job;
  local.setting = fmf::Setting::kLocal;
  local.split =
      Horizontal(options.job.setting) ? fmf::SplitKind::kHorizontal : fmf::SplitKind::kVertical;
  local.epsilon = kInf;
  const auto start = std::chrono::steady_clock::now();
  auto r = fmf::Simulate(local, federation);
  if (!r.ok()) {
    return absl::Status(r.status().code(), absl::StrCat("alone: ", r.status().message()));
  }
  CellRun run;
  run.action[0] = run.action[1] = actions[alone];
  for (int n = 0; n < 2; ++n) {
    m.table.alone_error[n] = r->parties[n].test.rmse;
    run.error[n] = m.table.alone_error[n];
    run.epsilon_spent[n] = 0;
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.runs.push_back(run);
  if (progress) progress(run, ++done, total);
  return m;
}

absl::StatusOr<TradeoffTable> CombineOwnViews(const TradeoffTable& player1_view,
                                              const TradeoffTable& player2_view) {
  if (player1_view.actions.size() != player2_view.actions.size()) {
    return absl::InvalidArgumentError("the two players measured different action grids");
  }
  for (size_t a = 0; a < player1_view.actions.size(); ++a) {
    if (ActionLabel(player1_view.actions[a]) != ActionLabel(player2_view.actions[a])) {
      return absl::InvalidArgumentError(
          absl::StrCat("action ", a, " differs: ", ActionLabel(player1_view.actions[a]), " vs ",
                       ActionLabel(player2_view.actions[a])));
    }
  }
  TradeoffTable t;
  t.actions = player1_view.actions;
  t.alone_error[0] = player1_view.alone_error[0];
  t.alone_error[1] = player2_view.alone_error[1];
  t.error[0] = player1_view.error[0];
  t.error[1] = player2_view.error[1];
  return t;
}

}  // namespace fedmf::advise
