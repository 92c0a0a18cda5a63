#include "common/coupling/train.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/coupling/dp_step.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"

namespace fedmf::coupling {

absl::Status CheckCouplingRatings(const std::vector<data::Rating>& ratings, int32_t num_users,
                                  int32_t num_items, const data::RatingRange& range,
                                  const std::string& what) {
  for (size_t k = 0; k < ratings.size(); ++k) {
    const data::Rating& r = ratings[k];
    if (r.user < 0 || r.user >= num_users || r.item < 0 || r.item >= num_items ||
        !(r.value >= range.min && r.value <= range.max)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "coupling: %s rating %d (user %d, item %d, value %g) is outside %d users x %d items "
          "x [%g, %g]",
          what, k, r.user, r.item, r.value, num_users, num_items, range.min, range.max));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateCouplingOptions(const CouplingOptions& o) {
  auto bad = [](const std::string& field, double value, const std::string& want) {
    return absl::InvalidArgumentError(
        absl::StrFormat("coupling option %s = %g: must be %s", field, value, want));
  };
  if (o.dim < 1 || o.dim > 1000) return bad("dim", o.dim, "in [1, 1000]");
  if (o.epochs < 1) return bad("epochs", o.epochs, ">= 1");
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) {
    return bad("learning_rate", o.learning_rate, "> 0 and finite");
  }
  if (!(o.zeta >= 0) || !std::isfinite(o.zeta)) return bad("zeta", o.zeta, ">= 0 and finite");
  if (!(o.clip > 0) || !std::isfinite(o.clip)) return bad("clip", o.clip, "> 0 and finite");
  if (!(o.noise_multiplier >= 0) || !std::isfinite(o.noise_multiplier)) {
    return bad("noise_multiplier", o.noise_multiplier, ">= 0 and finite (0 = non-private)");
  }
  if (!(o.sample_rate > 0 && o.sample_rate <= 1)) {
    return bad("sample_rate", o.sample_rate, "in (0, 1]");
  }
  if (!(o.coupling_bound > 0) || !std::isfinite(o.coupling_bound)) {
    return bad("coupling_bound", o.coupling_bound, "> 0 and finite");
  }
  if (!(o.init_scale >= 0 && o.init_scale <= 1))
    return bad("init_scale", o.init_scale, "in [0, 1]");
  return absl::OkStatus();
}

int64_t StepsPerEpoch(double sample_rate) {
  return static_cast<int64_t>(std::ceil(1.0 / sample_rate - 1e-9));
}

absl::StatusOr<CouplingRun> TrainCoupling(const std::vector<std::vector<data::Rating>>& owners,
                                          int32_t num_users, int32_t num_items,
                                          const data::RatingRange& range,
                                          const CouplingOptions& options,
                                          const std::vector<data::Rating>& validation,
                                          random::Csprng& rng, const EpochFn& on_epoch) {
  RETURN_IF_ERROR(ValidateCouplingOptions(options));
  if (owners.empty()) return absl::InvalidArgumentError("coupling: no data owners");
  int64_t declared = 0;
  for (size_t k = 0; k < owners.size(); ++k) {
    RETURN_IF_ERROR(CheckCouplingRatings(owners[k], num_users, num_items, range,
                                         absl::StrCat("owner ", k, "'s training")));
    declared += static_cast<int64_t>(owners[k].size());
  }
  RETURN_IF_ERROR(CheckCouplingRatings(validation, num_users, num_items, range, "validation"));
  if (declared == 0) return absl::InvalidArgumentError("coupling: the owners hold no ratings");

  random::Csprng init_rng = rng.Fork("coupling/init");
  CouplingRun run;
  ASSIGN_OR_RETURN(run.model,
                   InitialModel(num_users, num_items, options.dim, (range.min + range.max) / 2,
                                options.init_scale, init_rng));
  // Each owner's own streams: its sampling and its noise are its own.
  std::vector<random::Csprng> sample_rng, noise_rng;
  for (size_t k = 0; k < owners.size(); ++k) {
    sample_rng.push_back(rng.Fork(absl::StrCat("coupling/sample/", k)));
    noise_rng.push_back(rng.Fork(absl::StrCat("coupling/noise/", k)));
  }
  const double noise_stddev = options.noise_multiplier * options.clip;
  const int64_t steps_per_epoch = StepsPerEpoch(options.sample_rate);
  // A's sum of what the owners push. In one process each owner's noisy sum
  // is added into it directly (the same numbers as summing the owners' own
  // buffers, without two more passes over every coordinate).
  GradientSum total = GradientSum::ZerosLike(run.model);
  for (int32_t epoch = 1; epoch <= options.epochs; ++epoch) {
    EpochReport report;
    report.epoch = epoch;
    for (int64_t t = 0; t < steps_per_epoch; ++t) {
      const CouplingTerms terms = ComputeCouplingTerms(run.model);
      total.SetZero();
      for (size_t k = 0; k < owners.size(); ++k) {
        // Owner k: Poisson batch, clipped sum, its own noise (lines 5-10).
        const std::vector<data::Rating> batch =
            PoissonSampleRatings(owners[k], options.sample_rate, sample_rng[k]);
        report.sampled += static_cast<int64_t>(batch.size());
        report.clipped +=
            AddClippedGradients(run.model, terms, batch, options.zeta, options.clip, &total);
        if (noise_stddev > 0) AddGaussianNoise(noise_stddev, noise_rng[k], &total);
      }
      ApplyStep(total, options.learning_rate, options.coupling_bound, &run.model);
      ++run.steps;
    }
    report.steps = run.steps;
    if (!validation.empty()) report.validation = Evaluate(run.model, validation, range);
    run.epochs.push_back(report);
    if (on_epoch) on_epoch(report);
  }
  return run;
}

absl::StatusOr<double> CouplingEpsilon(const CouplingOptions& options, int64_t steps,
                                       double delta) {
  RETURN_IF_ERROR(ValidateCouplingOptions(options));
  if (options.noise_multiplier == 0) return std::numeric_limits<double>::infinity();
  return dp::ComputeEpsilon(options.sample_rate, options.noise_multiplier, steps, delta);
}

}  // namespace fedmf::coupling
