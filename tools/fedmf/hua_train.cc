#include "tools/fedmf/hua_train.h"

#include <cmath>
#include <iostream>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "common/hua/simulator.h"
#include "common/random/csprng.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {
absl::StatusOr<hua::HuaParams> BuildHuaParams(const JobFlags& a) {
  hua::HuaParams p;
  auto scenario = hua::ParseScenario(SettingName(a.setting));
  if (!scenario.ok()) return scenario.status();
  p.scenario = *scenario;
  ASSIGN_OR_RETURN(auto eps, ParseEpsilon(a.epsilon, "--epsilon"));
  p.epsilon = eps;
  ASSIGN_OR_RETURN(auto noise, hua::ParseObjectiveNoise(a.hua_noise));
  p.s1_noise = noise;
  p.dim = a.dim_given ? a.dim : 50;  // the paper's d unless asked otherwise
  p.iterations = a.rounds;
  p.baseline_iterations = a.hua_baseline_rounds;
  p.gamma = a.hua_gamma;
  p.lambda = a.hua_lambda;
  p.mu = a.hua_mu;
  p.max_online = a.hua_max_online;
  p.join_prob = a.hua_join;
  p.leave_prob = a.hua_leave;
  p.initial_online = a.hua_initial_online;
  p.dropout_prob = a.hua_dropout;
  p.paper_noise = a.hua_paper_noise;
  p.delta = a.delta;
  if (a.theta > 0) p.theta = a.theta;
  p.clip = a.hua_clip;
  p.validation_fraction = a.validation_fraction;
  RETURN_IF_ERROR(hua::ValidateHuaParams(p));
  return p;
}

namespace {

nlohmann::json CdfJson(const hua::ErrorCdf& c) {
  return {{"levels", c.levels},
          {"quantiles", c.quantiles},
          {"thresholds", c.thresholds},
          {"fractions", c.fractions}};
}

}  // namespace

void AddHuaPrivacyJson(const hua::HuaParams& p, const hua::HuaPrivacy& plan, double epsilon,
                       nlohmann::json& j) {
  j["epsilon_budget"] = JsonNumber(p.epsilon);
  j["delta"] = plan.delta;
  j["epsilon"] = JsonNumber(epsilon);
  if (p.paper_noise) {
    const int64_t releases = hua::ReleasesPerRating(p);
    const double per_release = hua::EpsilonPerRelease(p);
    j["mechanism"] = "paper";
    j["epsilon_per_release"] = JsonNumber(per_release);
    j["releases_per_rating"] = releases;
    // Basic composition of `releases` pure per_release-DP releases.
    j["epsilon_paper_analysis"] = JsonNumber(per_release * static_cast<double>(releases));
    if (!std::isinf(p.epsilon)) j["privacy_caveat"] = hua::PrivacyCaveat(p.scenario);
    return;
  }
  j["mechanism"] = "valid";
  j["granularity"] = "rating (value change, rated sets public)";
  if (p.scenario == hua::Scenario::kTrusted) {
    j["s1_u"] = "data-independent U(0), exact minimiser";
    return;
  }
  j["theta"] = p.theta;
  j["clip"] = plan.clip;
  j["sensitivity"] = plan.sensitivity;
  j["noise_multiplier"] = plan.noise_multiplier;
  j["sigma"] = plan.sigma;
  j["releases_max"] = plan.releases;
}

std::string HuaPrivacyLine(const hua::HuaParams& p, const hua::HuaPrivacy& plan, double epsilon) {
  if (p.paper_noise) {
    if (std::isinf(p.epsilon)) return "the paper's mechanism without noise: epsilon inf";
    return absl::StrFormat(
        "the paper's mechanism, budget %g: %g per release x %d releases (its per-release analysis, "
        "composed); epsilon reported: inf — %s",
        p.epsilon, hua::EpsilonPerRelease(p), hua::ReleasesPerRating(p),
        hua::PrivacyCaveat(p.scenario));
  }
  if (std::isinf(p.epsilon)) return "valid variant without noise: epsilon inf";
  if (p.scenario == hua::Scenario::kTrusted) {
    return absl::StrFormat("epsilon %g (pure, per rating; U data-independent, exact minimiser)",
                           epsilon);
  }
  return absl::StrFormat(
      "epsilon %.4g at delta %g per rating (value change; every user's whole report vector: "
      "theta %d, C %.4g, Delta %.4g, z %.4g, sigma %.4g, at most %d releases)",
      epsilon, plan.delta, p.theta, plan.clip, plan.sensitivity, plan.noise_multiplier, plan.sigma,
      plan.releases);
}

namespace {

nlohmann::json ResultJson(const hua::HuaResult& r, const std::string& data_spec) {
  const hua::HuaParams& p = r.params;
  nlohmann::json j = {{"setting", hua::ScenarioName(p.scenario)},
                      {"data", data_spec},
                      {"dim", p.dim},
                      {"gamma", p.gamma},
                      {"lambda", p.lambda},
                      {"mu", p.mu},
                      {"iterations", p.iterations},
                      {"baseline_iterations", p.baseline_iterations},
                      {"test_mse", r.test.mse},
                      {"test_rmse", r.test.rmse},
                      {"test_mae", r.test.mae},
                      {"user_mean_test_mse", r.user_mean_test.mse},
                      {"user_mean_test_mae", r.user_mean_test.mae},
                      {"ratings_used", r.ratings_used},
                      {"users_on_user_mean", r.users_on_mean},
                      {"epsilon_median_user", JsonNumber(r.epsilon_median_user)},
                      {"max_user_releases", r.max_user_releases},
                      {"train_mse", r.train.mse},
                      {"train_mae", r.train.mae},
                      {"baseline_test_mse", r.baseline_test.mse},
                      {"baseline_test_rmse", r.baseline_test.rmse},
                      {"baseline_test_mae", r.baseline_test.mae},
                      {"baseline_train_mae", r.baseline_train.mae},
                      {"mean_abs_error_increase", r.mean_abs_error_increase},
                      {"train_mean_abs_error_increase", r.train_mean_abs_error_increase},
                      {"error_cdf", CdfJson(r.error_cdf)},
                      {"baseline_error_cdf", CdfJson(r.baseline_error_cdf)},
                      {"bytes_down_per_user", r.traffic.down_per_user},
                      {"bytes_up_per_user", r.traffic.up_per_user},
                      {"max_bytes_down_user_le20", r.traffic.max_down_le20},
                      {"max_bytes_up_user_le20", r.traffic.max_up_le20},
                      {"plan_bytes_per_iteration", r.traffic.plan_per_iteration},
                      {"forward_bytes_per_iteration", r.traffic.forward_per_iteration},
                      {"init_bytes", r.traffic.init_bytes},
                      {"third_party_ms_per_iteration", r.third_party_ms_per_iteration},
                      {"users_per_iteration", r.mean_users_per_iteration},
                      {"dropped_users", r.dropped_users},
                      {"abandoned_item_updates", r.abandoned_item_updates},
                      {"test_ratings", r.test.count},
                      {"seconds", r.seconds}};
  if (p.scenario == hua::Scenario::kTrusted) j["objective_noise"] = ObjectiveNoiseName(p.s1_noise);
  if (p.scenario == hua::Scenario::kDynamic) {
    j["max_online"] = p.max_online;
    j["join"] = p.join_prob;
    j["leave"] = p.leave_prob;
    j["dropout"] = p.dropout_prob;
  }
  AddHuaPrivacyJson(p, r.privacy, r.epsilon, j);
  return j;
}

}  // namespace

int RunHuaTrain(const JobFlags& a) {
  auto dataset = LoadWithDeclaredRange(a, a.data);
  if (!dataset.ok()) {
    return Report("fedmf train: --data", dataset.status());
  }
  auto params = BuildHuaParams(a);
  if (!params.ok()) {
    return Report("fedmf train", UsageError(params.status()));
  }
  const uint64_t seed = a.seed ? *a.seed : random::Csprng::FromOsEntropy().NextU64();
  auto federation = data::PartitionCentral(*dataset, {0.1, a.seed.value_or(1)});
  if (!federation.ok()) {
    return Report("fedmf train", UsageError(federation.status()));
  }
  if (a.hua_validate) {
    // Hyperparameter selection: the training ratings only, 10% of them held
    // out as the validation set every test_* field then measures.
    data::Dataset train = *dataset;
    train.ratings = federation->parties[0].train;
    federation = data::PartitionCentral(train, {0.1, a.seed.value_or(1) + 1});
    if (!federation.ok()) {
      return Report("fedmf train", UsageError(federation.status()));
    }
  }
  hua::HuaProgressFn progress;
  if (!a.quiet) {
    progress = [](const hua::HuaProgress& p) {
      if (!p.test_mse) return;
      std::cerr << absl::StrFormat("iteration %5d/%d  %7.2fs  users %4d  test MSE %.4f\n",
                                   p.iteration, p.total, p.seconds, p.users, *p.test_mse);
    };
  }
  auto r = hua::SimulateHua(params->scenario, federation->parties[0], *params, seed, progress,
                            a.eval_every);
  if (!r.ok()) {
    return Report("fedmf train", RuntimeError(r.status()));
  }
  if (a.json) {
    nlohmann::json j = ResultJson(*r, a.data);
    j["evaluated_on"] = a.hua_validate ? "validation" : "test";
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << absl::StrFormat(
      "%s (Delta = %g, d = %d), %d iterations: test MSE %.4f, RMSE %.4f, MAE %.4f; "
      "non-private baseline MSE %.4f, MAE %.4f; user mean only MSE %.4f; mean |error| increase "
      "%+.4f (train %+.4f)\n%s\n",
      hua::ScenarioName(r->params.scenario), hua::RatingSpan(dataset->range), r->params.dim,
      r->params.iterations, r->test.mse, r->test.rmse, r->test.mae, r->baseline_test.mse,
      r->baseline_test.mae, r->user_mean_test.mse, r->mean_abs_error_increase,
      r->train_mean_abs_error_increase, HuaPrivacyLine(r->params, r->privacy, r->epsilon));
  std::cout << "|error| quantiles:";
  for (size_t k = 0; k < r->error_cdf.levels.size(); ++k) {
    std::cout << absl::StrFormat(" q%g=%.3f", r->error_cdf.levels[k], r->error_cdf.quantiles[k]);
  }
  std::cout << "\n";
  if (r->params.scenario != hua::Scenario::kTrusted) {
    std::cout << absl::StrFormat(
        "per user and iteration: %.0f B down, %.0f B up (users with <= 20 ratings: at most %d B "
        "down, %d B up); %.1f users per iteration; third party %.2f ms per iteration; %.1f s\n",
        r->traffic.down_per_user, r->traffic.up_per_user, r->traffic.max_down_le20,
        r->traffic.max_up_le20, r->mean_users_per_iteration, r->third_party_ms_per_iteration,
        r->seconds);
  }
  return 0;
}

}  // namespace fedmf::cli
