#include "common/fmf/tuning.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/data/synthetic.h"
#include "common/fmf/simulator.h"

namespace fedmf::fmf {
namespace {

// A double of the learning rate past the grid must lower the proxy MSE by
// this fraction for the next one to be tried.
constexpr double kMinTuningGain = 1e-3;

}  // namespace

absl::StatusOr<data::Federation> ProxyOfShape(const data::Federation& real, const JobConfig& config,
                                              uint64_t seed) {
  int64_t ratings = 0;
  double test = 0;
  for (const data::PartyData& p : real.parties) {
    ratings += static_cast<int64_t>(p.train.size() + p.test.size());
    test += static_cast<double>(p.test.size());
  }
  if (real.parties.empty() || ratings == 0) {
    return absl::InvalidArgumentError("tuning: the federation holds no ratings");
  }
  data::SyntheticOptions o;
  o.num_users = real.num_users;
  o.num_items = real.num_items;
  o.density = std::min(
      1.0, static_cast<double>(ratings) / (static_cast<double>(real.num_users) * real.num_items));
  o.range = real.range;
  o.seed = seed;
  auto proxy = data::GenerateSynthetic(o);
  if (!proxy.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tuning: no synthetic proxy of ", o.num_users,
                                                   " users x ", o.num_items, " items at density ",
                                                   o.density, ": ", proxy.status().message()));
  }
  FederationOptions fed;
  fed.parties = static_cast<int32_t>(real.parties.size());
  fed.split_seed = seed;
  fed.test_fraction = test / static_cast<double>(ratings);
  return BuildFederation(config, *std::move(proxy), fed);
}

std::vector<double> LearningRateGrid(const JobConfig& config) {
  if (config.UserClipped()) return {0, 0.1, 0.3, 1, 3, 10};
  const double base = config.EffectiveLearningRate();
  return {base / 4, base / 2, base, base * 2, base * 4};
}

absl::StatusOr<TuneResult> TuneLearningRateOnProxy(const JobConfig& config,
                                                   const data::Federation& proxy,
                                                   const std::vector<double>& grid,
                                                   int max_doublings) {
  if (grid.empty()) return absl::InvalidArgumentError("tuning: an empty learning-rate grid");
  TuneResult out;
  double best = std::numeric_limits<double>::infinity();
  absl::Status first_failure;
  auto try_rate = [&](double lr) {
    JobConfig candidate = config;
    candidate.learning_rate = lr;
    auto run = Simulate(candidate, proxy);
    if (!run.ok()) {
      if (first_failure.ok()) first_failure = run.status();
      return;
    }
    out.grid.push_back({lr, run->test.mse});
    if (std::isfinite(run->test.mse) && run->test.mse < best) {
      best = run->test.mse;
      out.learning_rate = lr;
    }
  };
  for (double lr : grid) try_rate(lr);
  const double top = *std::max_element(grid.begin(), grid.end());
  double next = top;
  for (int k = 0; k < max_doublings && top > 0 && out.learning_rate == next; ++k) {
    const double before = best;
    next *= 2;
    try_rate(next);
    if (!(best < before * (1 - kMinTuningGain))) break;  // not worth another double
  }
  if (!std::isfinite(best)) {
    return first_failure.ok()
               ? absl::FailedPreconditionError("tuning: every candidate diverged on the proxy")
               : absl::Status(first_failure.code(), absl::StrCat("tuning: every candidate failed; "
                                                                 "the first: ",
                                                                 first_failure.message()));
  }
  return out;
}

}  // namespace fedmf::fmf
