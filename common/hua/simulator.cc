#include "common/hua/simulator.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/central.h"
#include "common/hua/streams.h"

namespace fedmf::hua {
namespace {

absl::Status CheckCentral(const data::PartyData& split) {
  for (int32_t i = 0; i < split.num_users(); ++i) {
    if (split.global_users[i] != i) {
      return absl::InvalidArgumentError("the split must hold every user with global indices");
    }
  }
  for (int32_t j = 0; j < split.num_items(); ++j) {
    if (split.global_items[j] != j) {
      return absl::InvalidArgumentError("the split must hold every item with global indices");
    }
  }
  if (split.train.empty()) return absl::InvalidArgumentError("no training ratings");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HuaResult> SimulateHua(Scenario scenario, const data::PartyData& split,
                                      HuaParams params, uint64_t seed,
                                      const HuaProgressFn& progress, int32_t eval_every) {
  const auto start_time = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  };
  params.scenario = scenario;
  RETURN_IF_ERROR(ValidateHuaParams(params));
  RETURN_IF_ERROR(CheckCentral(split));
  const data::RatingRange& range = split.range;
  if (!(range.max > range.min)) return absl::InvalidArgumentError("empty rating range");

  const random::Csprng root = random::Csprng::FromSeed(seed);
  const mf::RatingMatrix by_user(split.num_users(), split.num_items(), split.train);
  const Profiles start = InitialProfiles(root, split.num_users(), split.num_items(), params.dim);
  const Profiles baseline = TrainNonPrivate(by_user, start, params);

  HuaResult r;
  r.params = params;
  ASSIGN_OR_RETURN(r.privacy, PlanPrivacy(params, range));
  std::vector<int32_t> releases(split.num_users(), 0);
  Profiles out;
  if (scenario == Scenario::kTrusted && params.paper_noise) {
    random::Csprng eta = RecommenderStream(root).Fork("s1-eta");
    out.u = baseline.u;
    out.v = TrainTrustedItems(by_user, baseline.u, start.v, params, range, eta);
    r.ratings_used = static_cast<int64_t>(split.train.size());
  } else if (scenario == Scenario::kTrusted) {
    // The valid S1: U(0) (data-independent), the exact perturbed minimiser,
    // then every user's own fit against the published V.
    random::Csprng eta = RecommenderStream(root).Fork("s1-eta");
    const mf::Matrix v = TrainTrustedItemsExact(by_user, start.u, start.v, params, range, eta);
    out = FitUsersLocally(by_user, v, params, range);
    for (int32_t i = 0; i < split.num_users(); ++i) releases[i] = by_user.RowSize(i) > 0;
    r.ratings_used = static_cast<int64_t>(split.train.size());
  } else {
    IterationFn on_iteration;
    if (progress) {
      on_iteration = [&](int32_t t, int32_t users, const Profiles* snap) {
        HuaProgress p{t, params.iterations, users, elapsed(), std::nullopt};
        if (snap != nullptr) p.test_mse = mf::Evaluate(split.test, snap->u, snap->v, range).mse;
        progress(p);
      };
    }
    ASSIGN_OR_RETURN(auto run,
                     RunProtocol(params, by_user, range, root, start, on_iteration, eval_every));
    out = std::move(run.profiles);
    releases = run.user_releases;
    r.users_on_mean = run.users_on_mean;
    for (int32_t n : run.user_ratings) r.ratings_used += n;
    r.traffic = run.traffic;
    r.third_party_ms_per_iteration = 1000.0 * run.third_party_seconds / params.iterations;
    r.mean_users_per_iteration = run.mean_users_per_iteration;
    r.dropped_users = run.dropped_users;
    r.abandoned_item_updates = run.abandoned_item_updates;
  }
  out = FoldBias(out);
  r.test = mf::Evaluate(split.test, out.u, out.v, range);
  r.train = mf::Evaluate(split.train, out.u, out.v, range);
  const Profiles means = FoldBias(UserMeans(by_user, range));
  r.user_mean_test = mf::Evaluate(split.test, means.u, means.v, range);
  std::vector<int32_t> active;
  for (int32_t n : releases) {
    r.max_user_releases = std::max<int64_t>(r.max_user_releases, n);
    if (n > 0) active.push_back(n);
  }
  ASSIGN_OR_RETURN(r.epsilon, UserEpsilon(r.privacy, r.max_user_releases));
  if (!r.privacy.valid) r.epsilon = std::numeric_limits<double>::infinity();
  if (!active.empty()) {
    std::nth_element(active.begin(), active.begin() + active.size() / 2, active.end());
    ASSIGN_OR_RETURN(r.epsilon_median_user, UserEpsilon(r.privacy, active[active.size() / 2]));
  }
  r.baseline_test = mf::Evaluate(split.test, baseline.u, baseline.v, range);
  r.baseline_train = mf::Evaluate(split.train, baseline.u, baseline.v, range);
  r.mean_abs_error_increase = r.test.mae - r.baseline_test.mae;
  r.train_mean_abs_error_increase = r.train.mae - r.baseline_train.mae;
  r.error_cdf = ComputeErrorCdf(split.test, out.u, out.v, range);
  r.baseline_error_cdf = ComputeErrorCdf(split.test, baseline.u, baseline.v, range);
  r.seconds = elapsed();
  return r;
}

}  // namespace fedmf::hua
