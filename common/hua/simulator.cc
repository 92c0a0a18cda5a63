#include "common/hua/simulator.h"

#include <chrono>

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
  Profiles out;
  if (scenario == Scenario::kTrusted) {
    random::Csprng eta = RecommenderStream(root).Fork("s1-eta");
    out.u = baseline.u;
    out.v = TrainTrustedItems(by_user, baseline.u, start.v, params, range, eta);
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
    r.traffic = run.traffic;
    r.third_party_ms_per_iteration = 1000.0 * run.third_party_seconds / params.iterations;
    r.mean_users_per_iteration = run.mean_users_per_iteration;
    r.dropped_users = run.dropped_users;
    r.abandoned_item_updates = run.abandoned_item_updates;
  }
  r.test = mf::Evaluate(split.test, out.u, out.v, range);
  r.train = mf::Evaluate(split.train, out.u, out.v, range);
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
