// The two-round DP protocol of LFL-SGDMF (FMF paper Section 6.2,
// Theorem 5), transport- and crypto-free: what each device adds in round 1
// and round 2, the server's skip rule, and the noise that remains.
//
// Round 1: device i submits  grad_i + xi_i,  xi_i ~ N(0, zeta1 sigma_v^2 I),
//          zeta1 = 1 / ((1 - omega) n), masked by secure aggregation; the
//          server learns only the sum over the survivors U1, and nothing at
//          all if |U1| < (1 - omega) n (the iteration is skipped).
// Round 2: the server announces |U1|; each survivor sends
//          xibar_i = -xi_i + xi'_i,  xi'_i ~ N(0, zeta2 sigma_v^2 I),
//          zeta2 = 1 / |U1|.
// With U2 the round-2 survivors, the noise left in
//   sum_{U1} (grad_i + xi_i) + sum_{U2} xibar_i
// is sum_{U1 \ U2} xi_i + sum_{U2} xi'_i, whose per-entry variance
//   |U1 \ U2| zeta1 sigma_v^2 + |U2| zeta2 sigma_v^2  >=  sigma_v^2
// because zeta1 >= 1/|U1| = zeta2: the aggregate is always at least as
// noisy as one Gaussian mechanism with std-dev sigma_v, whoever drops out.
//
// Both travel through secure aggregation as fixed-point integers, which needs
// a bound on every entry (secagg_sum.h). So each Gaussian draw is clamped to
// +-kNoiseTailSigmas standard deviations. Clamping changes the mechanism only
// on the event that some draw is clamped; by coupling, (eps, delta)-DP of the
// Gaussian becomes (eps, delta + (1 + e^eps) P[clamp]) for the clamped one.
// With 10 sigmas, P[|Z| > 10] = 1.5e-23 per draw: ML-100K (33640 entries,
// 943 devices, 2 rounds, T = 10) gives P[clamp] < 1e-14; even ML-10M sizes
// (2 x 10^5 entries, 7 x 10^4 devices, T = 100) give P[clamp] < 5e-11, an
// extra delta < 1.5e-7 at eps = 8, negligible next to delta = 1e-5. (At 8
// sigmas that run would add ~10: the clamp must sit further out.)
#ifndef FEDMF_COMMON_LFL_TWO_ROUND_DP_H_
#define FEDMF_COMMON_LFL_TWO_ROUND_DP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/random/csprng.h"

namespace fedmf::lfl {

inline constexpr double kNoiseTailSigmas = 10.0;

struct TwoRoundParams {
  int64_t num_devices = 0;  // n: devices selected for the iteration
  double omega = 0.3;       // tolerated dropout fraction
  double sigma_v = 0;       // target noise std-dev of the aggregate, per entry
};

absl::Status ValidateTwoRoundParams(const TwoRoundParams& p);

// The smallest number of round-1 survivors for which the server may decode:
// ceil((1 - omega) n).
int64_t MinSurvivors(const TwoRoundParams& p);
// zeta1 * sigma_v^2 and zeta2 * sigma_v^2 as per-entry variances.
double Round1Variance(const TwoRoundParams& p);
double Round2Variance(const TwoRoundParams& p, int64_t round1_survivors);
// The per-entry variance left after round 2 (the formula above).
double RemainingVariance(const TwoRoundParams& p, int64_t round1_survivors,
                         int64_t round2_survivors);
// Largest |entry| of a round-2 replacement xibar_i = -xi_i + xi'_i for any
// announced |U1| >= MinSurvivors: tail * (sqrt(zeta1) + sqrt(zeta2_max)) sigma_v.
double Round2Bound(const TwoRoundParams& p, double tail_sigmas);

// One device's side of one iteration. Holds xi_i between the rounds and
// forgets it afterwards.
class DeviceNoise {
 public:
  explicit DeviceNoise(TwoRoundParams params) : params_(params) {}

  // Adds xi_i ~ N(0, zeta1 sigma_v^2), clamped at kNoiseTailSigmas, to
  // `gradient` in place (round 1).
  void AddRound1Noise(std::vector<double>& gradient, random::Csprng& rng);
  // xibar_i = -xi_i + xi'_i for the announced |U1| (round 2). Fails if
  // called before round 1, twice, or with an impossible |U1| (a lying
  // server announcing fewer than (1 - omega) n survivors, or more than n).
  absl::StatusOr<std::vector<double>> Round2Replacement(int64_t round1_survivors,
                                                        random::Csprng& rng);

 private:
  TwoRoundParams params_;
  std::vector<double> xi_;
  bool round1_done_ = false;
  bool round2_done_ = false;
};

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_TWO_ROUND_DP_H_
