#include "common/fmf/tuning.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/data/synthetic.h"
#include "common/fmf/simulator.h"

namespace fedmf::fmf {
namespace {

// A double of the learning rate past the grid must lower the proxy MSE by
// this fraction for the next one to be tried.
constexpr double kMinTuningGain = 1e-3;

}  // namespace

absl::StatusOr<ProxyShape> ParseProxyShape(const std::string& text) {
  const std::string fix =
      "write users=N,items=M,ratings=R (declared public sizes, e.g. a published "
      "data set's: users=943,items=1682,ratings=100000)";
  ProxyShape shape;
  bool users = false, items = false, ratings = false;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    const std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &value) || value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tune shape '", text, "': '", part, "' is not KEY=positive integer; ", fix));
    }
    if (kv[0] == "users" && value <= std::numeric_limits<int32_t>::max()) {
      shape.users = static_cast<int32_t>(value);
      users = true;
    } else if (kv[0] == "items" && value <= std::numeric_limits<int32_t>::max()) {
      shape.items = static_cast<int32_t>(value);
      items = true;
    } else if (kv[0] == "ratings") {
      shape.ratings = value;
      ratings = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("tune shape '", text, "': unknown key or too large: '", part, "'; ", fix));
    }
  }
  if (!users || !items || !ratings) {
    return absl::InvalidArgumentError(absl::StrCat("tune shape '", text, "' misses ",
                                                   !users   ? "users"
                                                   : !items ? "items"
                                                            : "ratings",
                                                   "; ", fix));
  }
  return shape;
}

absl::StatusOr<data::Federation> ProxyOfShape(const ProxyShape& shape, data::RatingRange range,
                                              int32_t parties, const JobConfig& config,
                                              uint64_t seed) {
  if (shape.users < 1 || shape.items < 1 || shape.ratings < 1) {
    return absl::InvalidArgumentError("tuning: the proxy's declared shape is empty");
  }
  data::SyntheticOptions o;
  o.num_users = shape.users;
  o.num_items = shape.items;
  o.density = std::min(
      1.0, static_cast<double>(shape.ratings) / (static_cast<double>(shape.users) * shape.items));
  o.range = range;
  o.seed = seed;
  auto proxy = data::GenerateSynthetic(o);
  if (!proxy.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tuning: no synthetic proxy of ", o.num_users,
                                                   " users x ", o.num_items, " items at density ",
                                                   o.density, ": ", proxy.status().message()));
  }
  FederationOptions fed;
  fed.parties = parties;
  fed.split_seed = seed;
  fed.test_fraction = config.test_fraction;
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
