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
// With U2 the round-2 survivors, the noise left in the update
//   sum_{U1} (grad_i + xi_i) + sum_{U2} xibar_i
// is sum_{U1 \ U2} xi_i + sum_{U2} xi'_i, whose per-entry variance
//   |U1 \ U2| zeta1 sigma_v^2 + |U2| zeta2 sigma_v^2  >=  sigma_v^2
// (RemainingVariance). That is the noise in the model, NOT the privacy of
// the protocol: the server decodes S1 = G + sum_{U1} xi_i and
// S2 = sum_{U2} (-xi_i + xi'_i) separately, and S2 is correlated with S1's
// noise. Its best linear unbiased (GLS) estimate of G is
//   G^ = S1 + v1 / (v1 + v2) S2,  v1 = zeta1 sigma_v^2, v2 = zeta2 sigma_v^2,
// with per-entry variance (ServerViewVariance; proof in docs/privacy.md)
//   |U1| v1 - |U2| v1^2 / (v1 + v2),
// which is only sigma_v^2 / (2 - omega) without dropout (FMF paper
// Theorem 5 claims sigma_v^2). The worst case over every pattern a server
// can produce — |U1| = MinSurvivors, U2 = U1, and |U1| announced as n, which
// a device cannot check — is sigma_v^2 MinSurvivors / ((2 - omega) n)
// (WorstCaseServerViewVariance) >= sigma_v^2 (1 - omega) / (2 - omega). The
// job therefore calibrates sigma_v = z Delta sqrt((2 - omega) / (1 - omega))
// (ServerViewVarianceInflation), so that the server's joint view is at least
// as noisy as the Gaussian mechanism with multiplier z whose epsilon it
// reports.
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
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/random/csprng.h"

namespace fedmf::lfl {

inline constexpr double kNoiseTailSigmas = 10.0;

struct TwoRoundParams {
  int64_t num_devices = 0;  // n: devices selected for the iteration
  double omega = 0.3;       // tolerated dropout fraction
  // Noise scale, per entry: the update's noise is >= sigma_v^2 (RemainingVariance),
  // the server's view >= sigma_v^2 (1 - omega) / (2 - omega) (WorstCaseServerViewVariance).
  double sigma_v = 0;
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
// The per-entry variance of the server's GLS estimate of G from its joint
// view (S1, S2) when |U1| = round1_survivors inputs are in S1, |U2| =
// round2_survivors (0 = round 2 aborted) of them in S2, and the devices were
// told |U1| = announced_round1_survivors (zeta2 = 1 / announced). The view is
// equivalent to one Gaussian mechanism with this variance (docs/privacy.md).
// Requires 1 <= round1_survivors, 0 <= round2_survivors <= round1_survivors,
// announced >= 1.
double ServerViewVariance(const TwoRoundParams& p, int64_t round1_survivors,
                          int64_t round2_survivors, int64_t announced_round1_survivors);
// The minimum of ServerViewVariance over every pattern the protocol lets a
// server produce: |U1| in [MinSurvivors, n] (fewer and it decodes nothing),
// U2 any subset of U1 (round 2's own threshold is set by the server), and
// any announcement in [MinSurvivors, n] (what DeviceNoise accepts). Attained
// at |U1| = |U2| = MinSurvivors, announced n:
//   sigma_v^2 MinSurvivors / (n + (1 - omega) n).
double WorstCaseServerViewVariance(const TwoRoundParams& p);
// sup over n of sigma_v^2 / WorstCaseServerViewVariance = (2 - omega) / (1 - omega):
// the factor by which sigma_v^2 must exceed (z Delta)^2 for any n.
double ServerViewVarianceInflation(double omega);
// The weight of S2 in the server's GLS estimate G^ = S1 + w S2 for a given
// announcement: w = v1 / (v1 + v2).
double ServerGlsWeight(const TwoRoundParams& p, int64_t announced_round1_survivors);
// Largest |entry| of a round-2 replacement xibar_i = -xi_i + xi'_i for any
// announced |U1| >= MinSurvivors: tail * (sqrt(zeta1) + sqrt(zeta2_max)) sigma_v.
double Round2Bound(const TwoRoundParams& p, double tail_sigmas);

// One device's side of one iteration. Between the rounds it holds not xi_i
// but a replica of the noise stream at the point xi_i was drawn from
// (Csprng::Replica), and regenerates xi_i in round 2: a few kB per device
// instead of an m x p vector, so a simulation of 70,000 devices at
// MovieLens-10M shape does not hold 120 GB of noise, with the same values.
// The replica is dropped after round 2 (or the next round 1).
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
  std::optional<random::Csprng> xi_stream_;  // replays xi_i; set by round 1
  size_t xi_length_ = 0;
  bool round1_done_ = false;
  bool round2_done_ = false;
};

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_TWO_ROUND_DP_H_
