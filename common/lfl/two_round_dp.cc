#include "common/lfl/two_round_dp.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/dp/noise.h"

namespace fedmf::lfl {

absl::Status ValidateTwoRoundParams(const TwoRoundParams& p) {
  if (p.num_devices < 1) return absl::InvalidArgumentError("num_devices must be >= 1");
  if (!(p.omega >= 0 && p.omega < 1)) return absl::InvalidArgumentError("omega must be in [0, 1)");
  if (!(p.sigma_v >= 0) || !std::isfinite(p.sigma_v)) {
    return absl::InvalidArgumentError("sigma_v must be finite and >= 0");
  }
  return absl::OkStatus();
}

int64_t MinSurvivors(const TwoRoundParams& p) {
  // ceil with a tolerance so that e.g. (1 - 0.3) * 10 = 7.000000000000001 is 7.
  const double need = (1.0 - p.omega) * static_cast<double>(p.num_devices);
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(need - 1e-9)));
}

double Round1Variance(const TwoRoundParams& p) {
  return p.sigma_v * p.sigma_v / ((1.0 - p.omega) * static_cast<double>(p.num_devices));
}

double Round2Variance(const TwoRoundParams& p, int64_t round1_survivors) {
  return p.sigma_v * p.sigma_v / static_cast<double>(round1_survivors);
}

double RemainingVariance(const TwoRoundParams& p, int64_t round1_survivors,
                         int64_t round2_survivors) {
  return static_cast<double>(round1_survivors - round2_survivors) * Round1Variance(p) +
         static_cast<double>(round2_survivors) * Round2Variance(p, round1_survivors);
}

double ServerViewVariance(const TwoRoundParams& p, int64_t round1_survivors,
                          int64_t round2_survivors, int64_t announced_round1_survivors) {
  const double v1 = Round1Variance(p);
  const double v2 = Round2Variance(p, announced_round1_survivors);
  const double u1 = static_cast<double>(round1_survivors);
  const double u2 = static_cast<double>(round2_survivors);
  if (v1 + v2 == 0) return 0;  // no noise at all
  // Cov(S1, S2) = [[u1 v1, -u2 v1], [-u2 v1, u2 (v1 + v2)]]; the GLS
  // variance of G is the Schur complement u1 v1 - (u2 v1)^2 / (u2 (v1 + v2)).
  return u1 * v1 - u2 * v1 * v1 / (v1 + v2);
}

double WorstCaseServerViewVariance(const TwoRoundParams& p) {
  // Decreasing in |U2| and in the announcement, increasing in |U1| along
  // U2 = U1 (docs/privacy.md): the minimum sits at the corner.
  const int64_t m = MinSurvivors(p);
  return ServerViewVariance(p, m, m, p.num_devices);
}

double ServerViewVarianceInflation(double omega) { return (2.0 - omega) / (1.0 - omega); }

double ServerGlsWeight(const TwoRoundParams& p, int64_t announced_round1_survivors) {
  const double v1 = Round1Variance(p);
  const double v2 = Round2Variance(p, announced_round1_survivors);
  return v1 + v2 == 0 ? 0.0 : v1 / (v1 + v2);
}

double Round2Bound(const TwoRoundParams& p, double tail_sigmas) {
  return tail_sigmas *
         (std::sqrt(Round1Variance(p)) + std::sqrt(Round2Variance(p, MinSurvivors(p))));
}

namespace {

// n draws of N(0, variance), each clamped to +-kNoiseTailSigmas std-devs.
void FillClampedGaussian(random::Csprng& rng, double variance, double* out, size_t n) {
  if (variance == 0) {  // no noise (epsilon = inf): draw nothing
    std::fill(out, out + n, 0.0);
    return;
  }
  const double sigma = std::sqrt(variance);
  dp::FillGaussian(rng, sigma, out, n);
  const double limit = kNoiseTailSigmas * sigma;
  for (size_t k = 0; k < n; ++k) out[k] = std::clamp(out[k], -limit, limit);
}

}  // namespace

void DeviceNoise::AddRound1Noise(std::vector<double>& gradient, random::Csprng& rng) {
  xi_stream_.emplace(rng.Replica());
  xi_length_ = gradient.size();
  std::vector<double> xi(gradient.size());
  FillClampedGaussian(rng, Round1Variance(params_), xi.data(), xi.size());
  for (size_t k = 0; k < gradient.size(); ++k) gradient[k] += xi[k];
  std::fill(xi.begin(), xi.end(), 0.0);
  round1_done_ = true;
  round2_done_ = false;
}

absl::StatusOr<std::vector<double>> DeviceNoise::Round2Replacement(int64_t round1_survivors,
                                                                   random::Csprng& rng) {
  if (!round1_done_) return absl::FailedPreconditionError("round 2 before round 1");
  if (round2_done_) return absl::FailedPreconditionError("round 2 already answered");
  if (round1_survivors < MinSurvivors(params_) || round1_survivors > params_.num_devices) {
    // Answering for a smaller |U1| would under-noise the aggregate.
    return absl::InvalidArgumentError(absl::StrCat("announced |U1| = ", round1_survivors,
                                                   " outside [", MinSurvivors(params_), ", ",
                                                   params_.num_devices, "]"));
  }
  std::vector<double> out(xi_length_);
  FillClampedGaussian(rng, Round2Variance(params_, round1_survivors), out.data(), out.size());
  std::vector<double> xi(xi_length_);  // round 1's draw, the same values
  FillClampedGaussian(*xi_stream_, Round1Variance(params_), xi.data(), xi.size());
  for (size_t k = 0; k < out.size(); ++k) out[k] -= xi[k];
  std::fill(xi.begin(), xi.end(), 0.0);
  xi_stream_.reset();
  round2_done_ = true;
  return out;
}

}  // namespace fedmf::lfl
