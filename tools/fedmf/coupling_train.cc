#include "tools/fedmf/coupling_train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/coupling/train.h"
#include "common/data/partition.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "common/random/csprng.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {
namespace {

struct CouplingData {
  int32_t num_users = 0;
  int32_t num_items = 0;
  data::RatingRange range;
  std::vector<std::vector<data::Rating>> owners;  // training, global indices
  std::vector<data::Rating> validation;           // carved from the owners' training
  std::vector<data::Rating> test;
};

// Owners hold disjoint users (as HFL); each holds out `validation_fraction`
// of its own training ratings for choosing hyperparameters.
absl::StatusOr<CouplingData> LoadCouplingData(const JobFlags& a) {
  if (!(a.validation_fraction >= 0 && a.validation_fraction < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--validation-fraction %g: must be in [0, 1) (the share of each owner's training ratings "
        "held out to choose hyperparameters; 0 holds none out)",
        a.validation_fraction));
  }
  ASSIGN_OR_RETURN(data::Dataset dataset, LoadWithDeclaredRange(a, a.data));
  const uint64_t seed = a.seed.value_or(1);
  ASSIGN_OR_RETURN(data::Federation fed,
                   data::PartitionHfl(dataset, a.parties, {coupling::kPaperTestFraction, seed}));
  CouplingData out;
  out.num_users = fed.num_users;
  out.num_items = fed.num_items;
  out.range = fed.range;
  random::Csprng rng = random::Csprng::FromSeed(seed).Fork("coupling/validation");
  for (const data::PartyData& p : fed.parties) {
    ASSIGN_OR_RETURN(std::vector<data::Rating> train,
                     data::ToGlobalIndices(p, p.train, fed.num_users, fed.num_items));
    ASSIGN_OR_RETURN(std::vector<data::Rating> test,
                     data::ToGlobalIndices(p, p.test, fed.num_users, fed.num_items));
    std::shuffle(train.begin(), train.end(), rng);
    const auto held = static_cast<size_t>(std::llround(a.validation_fraction * train.size()));
    out.validation.insert(out.validation.end(), train.begin(), train.begin() + held);
    out.owners.emplace_back(train.begin() + held, train.end());
    out.test.insert(out.test.end(), test.begin(), test.end());
  }
  return out;
}

absl::StatusOr<coupling::CouplingOptions> OptionsFromFlags(const JobFlags& a) {
  coupling::CouplingOptions o;
  o.dim = a.dim;
  o.epochs = a.coupling_epochs;
  o.learning_rate = a.lr > 0 ? a.lr : o.learning_rate;
  o.zeta = a.coupling_zeta;
  o.clip = a.coupling_clip;
  o.sample_rate = a.sample_rate;
  o.coupling_bound = a.coupling_bound;
  o.init_scale = a.coupling_init;
  RETURN_IF_ERROR(coupling::ValidateCouplingOptions(o));
  const int64_t steps = o.epochs * coupling::StepsPerEpoch(o.sample_rate);
  if (a.coupling_sigma) {
    // The paper's knob: an absolute noise std-dev per coordinate.
    if (!(*a.coupling_sigma >= 0) || !std::isfinite(*a.coupling_sigma)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--coupling-sigma %g: must be >= 0 and finite (0 = non-private)", *a.coupling_sigma));
    }
    o.noise_multiplier = *a.coupling_sigma / o.clip;
    return o;
  }
  ASSIGN_OR_RETURN(double epsilon, ParseEpsilon(a.epsilon, "--epsilon"));
  if (!std::isinf(epsilon)) {
    ASSIGN_OR_RETURN(o.noise_multiplier,
                     dp::CalibrateNoiseMultiplier(o.sample_rate, steps, a.delta, epsilon));
  }
  return o;
}

// What a finished run reports, and how long it took.
struct CouplingOutcome {
  const CouplingData& data;
  const coupling::CouplingOptions& options;
  const coupling::CouplingRun& run;
  double epsilon = 0;
  mf::ErrorMetrics test;
  double seconds = 0;
};

nlohmann::json CouplingJson(const JobFlags& a, const CouplingOutcome& r) {
  const coupling::CouplingOptions& o = r.options;
  const mf::ErrorMetrics validation = r.run.epochs.back().validation;
  // Without held-out ratings there is no validation error (not 0).
  auto validation_json = [&validation](double x) {
    return validation.count > 0 ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  int64_t train_ratings = 0;
  for (const auto& owner : r.data.owners) train_ratings += static_cast<int64_t>(owner.size());
  nlohmann::json epochs = nlohmann::json::array();
  for (const coupling::EpochReport& e : r.run.epochs) {
    epochs.push_back({{"epoch", e.epoch},
                      {"validation_rmse", e.validation.count > 0 ? nlohmann::json(e.validation.rmse)
                                                                 : nlohmann::json(nullptr)},
                      {"clipped_fraction", e.sampled ? double(e.clipped) / e.sampled : 0.0}});
  }
  return {{"setting", "coupling"},
          {"data", a.data},
          {"parties", static_cast<int>(r.data.owners.size())},
          {"users", r.data.num_users},
          {"items", r.data.num_items},
          {"train_ratings", train_ratings},
          {"validation_ratings", validation.count},
          {"test_ratings", r.test.count},
          {"test_mse", r.test.mse},
          {"test_rmse", r.test.rmse},
          {"test_mae", r.test.mae},
          {"validation_rmse", validation_json(validation.rmse)},
          {"validation_mae", validation_json(validation.mae)},
          {"epsilon", JsonNumber(r.epsilon)},
          {"delta", a.delta},
          {"noise_multiplier", o.noise_multiplier},
          {"sigma", o.noise_multiplier * o.clip},
          {"clip", o.clip},
          {"sensitivity", o.clip},
          // Each owner's ratings, each independently at q (docs/privacy.md, coupling).
          {"sampling_unit", "rating"},
          {"sample_rate", o.sample_rate},
          {"steps", r.run.steps},
          {"epochs", o.epochs},
          {"dim", o.dim},
          {"learning_rate", o.learning_rate},
          {"zeta", o.zeta},
          {"coupling_bound", o.coupling_bound},
          {"parameters", r.run.model.ParameterCount()},
          {"seconds", r.seconds},
          {"per_epoch", epochs}};
}

std::string CouplingText(const JobFlags& a, const CouplingOutcome& r) {
  const coupling::CouplingOptions& o = r.options;
  const mf::ErrorMetrics validation = r.run.epochs.back().validation;
  const std::string privacy =
      std::isinf(r.epsilon)
          ? std::string("non-private (no noise)")
          : absl::StrFormat(
                "epsilon %.4f at delta %g per rating, per owner (z = %.4f, sigma = "
                "%.4f, C = %.4f, q = %g, %d steps)",
                r.epsilon, a.delta, o.noise_multiplier, o.noise_multiplier * o.clip, o.clip,
                o.sample_rate, r.run.steps);
  return absl::StrFormat(
      "\ncoupling (%d owners, %d users x %d items, %d parameters): test RMSE %.4f, MAE %.4f, "
      "MSE %.4f over %d ratings (validation RMSE %s); %s; %d epochs, %.1f s\n",
      static_cast<int>(r.data.owners.size()), r.data.num_users, r.data.num_items,
      r.run.model.ParameterCount(), r.test.rmse, r.test.mae, r.test.mse, r.test.count,
      validation.count > 0 ? absl::StrFormat("%.4f", validation.rmse) : std::string("-"), privacy,
      o.epochs, r.seconds);
}

}  // namespace

int RunCouplingTrain(const JobFlags& a) {
  auto loaded = LoadCouplingData(a);
  if (!loaded.ok()) {
    return Report("fedmf train", loaded.status());
  }
  auto options = OptionsFromFlags(a);
  if (!options.ok()) {
    return Report("fedmf train", UsageError(options.status()));
  }
  const coupling::CouplingOptions& o = *options;
  random::Csprng rng = random::Csprng::FromOptionalSeed(a.seed);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto on_epoch = [&](const coupling::EpochReport& r) {
    if (a.quiet) return;
    std::cerr << absl::StrFormat(
        "epoch %4d/%d  %7.1fs  validation RMSE %s  clipped %.0f%%\n", r.epoch, o.epochs, seconds(),
        r.validation.count > 0 ? absl::StrFormat("%.4f", r.validation.rmse) : std::string("-"),
        r.sampled ? 100.0 * r.clipped / r.sampled : 0.0);
  };
  auto run = coupling::TrainCoupling(loaded->owners, loaded->num_users, loaded->num_items,
                                     loaded->range, o, loaded->validation, rng, on_epoch);
  if (!run.ok()) {
    return Report("fedmf train", run.status());
  }
  auto epsilon = coupling::CouplingEpsilon(o, run->steps, a.delta);
  if (!epsilon.ok()) {
    return Report("fedmf train", RuntimeError(epsilon.status()));
  }
  const CouplingOutcome outcome{
      *loaded,  o, *run, *epsilon, coupling::Evaluate(run->model, loaded->test, loaded->range),
      seconds()};
  if (a.json) {
    std::cout << CouplingJson(a, outcome).dump() << "\n";
  } else {
    std::cout << CouplingText(a, outcome);
  }
  return 0;
}

}  // namespace fedmf::cli
