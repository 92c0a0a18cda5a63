#include "common/hua/params.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fedmf::hua {

absl::StatusOr<Scenario> ParseScenario(const std::string& name) {
  if (name == "hua-s1") return Scenario::kTrusted;
  if (name == "hua-s2") return Scenario::kUntrusted;
  if (name == "hua-s2-tp") return Scenario::kUntrustedThirdParty;
  if (name == "hua-s3") return Scenario::kDynamic;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown Hua scenario '", name, "'; use hua-s1, hua-s2, hua-s2-tp or hua-s3"));
}

const char* ScenarioName(Scenario s) {
  switch (s) {
    case Scenario::kTrusted: return "hua-s1";
    case Scenario::kUntrusted: return "hua-s2";
    case Scenario::kUntrustedThirdParty: return "hua-s2-tp";
    case Scenario::kDynamic: return "hua-s3";
  }
  return "?";
}

absl::StatusOr<ObjectiveNoise> ParseObjectiveNoise(const std::string& name) {
  if (name == "gamma-norm" || name == "theorem1") return ObjectiveNoise::kGammaNorm;
  if (name == "laplace" || name == "lemma1") return ObjectiveNoise::kLaplace;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown objective noise '", name, "'; use gamma-norm or laplace"));
}

const char* ObjectiveNoiseName(ObjectiveNoise n) {
  return n == ObjectiveNoise::kGammaNorm ? "gamma-norm" : "laplace";
}

absl::Status ValidateHuaParams(const HuaParams& p) {
  auto bad = [](const std::string& what) { return absl::InvalidArgumentError(what); };
  if (p.dim < 1) return bad("dim must be >= 1");
  if (!(p.gamma > 0) || !std::isfinite(p.gamma)) return bad("gamma must be finite and > 0");
  if (!(p.lambda >= 0) || !std::isfinite(p.lambda)) return bad("lambda must be finite and >= 0");
  // mu > 0 makes the perturbed objective strongly convex in V (Theorem 1 needs
  // a unique minimizer).
  if (!(p.mu > 0) || !std::isfinite(p.mu)) return bad("mu must be finite and > 0");
  if (p.iterations < 1 || p.baseline_iterations < 1) return bad("iterations must be >= 1");
  if (!(p.epsilon > 0)) return bad("epsilon must be > 0 (inf for no noise)");
  auto prob = [](double x) { return x >= 0 && x <= 1; };
  if (!prob(p.join_prob) || !prob(p.leave_prob) || !prob(p.dropout_prob)) {
    return bad("join, leave and dropout probabilities must be in [0, 1]");
  }
  if (p.initial_online > 1) return bad("initial online fraction must be <= 1");
  if (p.max_online < 1) return bad("max online users K must be >= 1");
  if (p.zp.frac_bits < 0 || p.zp.frac_bits > 52) return bad("frac_bits must be in [0, 52]");
  if (!(p.delta > 0 && p.delta < 1)) return bad("delta must be in (0, 1)");
  if (p.theta < 1) return bad("theta (rated items a user keeps) must be >= 1");
  if (!(p.clip >= 0) || !std::isfinite(p.clip)) return bad("clip must be finite and >= 0");
  if (!(p.validation_fraction >= 0 && p.validation_fraction < 1)) {
    return bad("validation_fraction must be in [0, 1)");
  }
  return absl::OkStatus();
}

int64_t ReleasesPerRating(const HuaParams& p) {
  return p.scenario == Scenario::kTrusted ? 1 : static_cast<int64_t>(p.iterations);
}

double EpsilonPerRelease(const HuaParams& p) {
  if (std::isinf(p.epsilon)) return p.epsilon;
  return p.epsilon / static_cast<double>(ReleasesPerRating(p));
}

std::string PrivacyCaveat(Scenario s) {
  if (s == Scenario::kTrusted) {
    return "no valid epsilon for the paper's mechanism: S1's U is trained on the same ratings "
           "without noise (Theorem 1 "
           "needs a data-independent U) and V is an approximate minimizer after a fixed number "
           "of gradient steps (objective perturbation covers the exact one); docs/privacy.md, "
           "section hua";
  }
  return "no valid epsilon for the paper's mechanism: each user's u_i is updated from all of her "
         "ratings between "
         "releases, so one rating moves every item report of that user, and V is unbounded, so "
         "that change has no bound (the per-release analysis assumes a fixed u_i); "
         "docs/privacy.md, section hua (the default variant has a valid epsilon)";
}

bool IsPrivate(const HuaParams& p) { return !p.paper_noise && std::isfinite(p.epsilon); }

double RatingSpan(const data::RatingRange& range) { return range.max - range.min; }

double LaplaceScale(double epsilon, const data::RatingRange& range, int32_t dim) {
  if (std::isinf(epsilon)) return 0;
  return 2.0 * RatingSpan(range) * std::sqrt(static_cast<double>(dim)) / epsilon;
}

double GammaNormScale(double epsilon, const data::RatingRange& range) {
  if (std::isinf(epsilon)) return 0;
  return 2.0 * RatingSpan(range) / epsilon;
}

}  // namespace fedmf::hua
