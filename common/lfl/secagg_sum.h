// LFL-SGDMF over real secure aggregation: the fixed-point encoding both
// sides agree on, and a SecureSumFn that runs the SecAgg / SecAgg+ client
// and server state machines (common/secagg) in process.
//
// Fixed point. Reals travel as round(x 2^f) in Z_{2^k}. The server decodes
// a sum of up to n encodings, which must not wrap: n * ceil(B 2^f) < 2^{k-1}
// with B the largest |entry| one device can send. B comes from clipping:
//   round 1: |grad entry| = |2 e u_c| <= 2 R sqrt(R) (e and u clipped, see
//            Round1Bound) plus xi_i clamped at kNoiseTailSigmas sqrt(zeta1)
//            sigma_v;
//   round 2: |xibar_i| <= kNoiseTailSigmas (sqrt(zeta1) + sqrt(zeta2_max))
//            sigma_v with zeta2_max = 1 / MinSurvivors (Round2Bound).
// Given k, f is the largest value satisfying the no-wrap condition, i.e. the
// best precision; the rounding error of a decoded sum is <= n 2^{-f-1} per
// entry. Device (encode) and server (decode) both call ChooseLflCodecs with
// the job's public parameters, so they cannot disagree.
//
// SecAggSum. Every call is one fresh aggregation: a new 64-bit seed is drawn
// from the Csprng it owns, from which the aggregation id, the graph
// permutation, every device's keys and self-mask seeds and the server's
// randomness derive (secagg::Simulate). With SecAggSumOptions::session the
// keys and graph are the first call's (secagg::SimulatedSession). The abort threshold is the LFL
// skip rule: the server decodes only if at least request.min_survivors devices are left at the
// unmasking step (= ceil((1 - omega) |roster|)).
#ifndef FEDMF_COMMON_LFL_SECAGG_SUM_H_
#define FEDMF_COMMON_LFL_SECAGG_SUM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/crypto/fixed_point.h"
#include "common/lfl/secure_sum.h"
#include "common/lfl/two_round_dp.h"
#include "common/random/csprng.h"
#include "common/secagg/config.h"
#include "common/secagg/parameters.h"

namespace fedmf::lfl {

// The codec with the most fractional bits such that `summands` values of
// magnitude <= max_abs sum without wrapping in Z_{2^bits}. max_abs <= 0
// (e.g. no noise at all) is treated as 1.
absl::StatusOr<crypto::FixedPointCodec> MaxPrecisionCodec(int bits, double max_abs,
                                                          uint64_t summands);

struct LflCodecs {
  crypto::FixedPointCodec round1;
  crypto::FixedPointCodec round2;
};

// 32 bits: the masks cost half the AES keystream of 64 and uploads are half as
// big, while the rounding error of a decoded sum (n 2^{-f-1}; ML-100K: ~0.007
// per entry at eps = inf, <= 0.12 at eps = 1) stays far below both the DP
// noise (sigma_v ~ 446 at eps = 1, omega = 0.3) and the gradient signal. --secagg-bits 64 for more.
inline constexpr int kDefaultLflBits = 32;

// Both rounds' codecs for n = dp.num_devices devices with ratings in
// [.., rating_max]. Fails (naming the field) if no precision is left.
// `gradient_norm`: the devices' round-1 gradient norm bound
// (LflDeviceOptions::GradientNormBound; 0: one rating's, 2 R^{3/2}).
absl::StatusOr<LflCodecs> ChooseLflCodecs(const TwoRoundParams& dp, double rating_max,
                                          int bits = kDefaultLflBits, double gradient_norm = 0);

struct SecAggSumOptions {
  secagg::GraphKind graph = secagg::GraphKind::kHarary;  // SecAgg+; kComplete = Bonawitz
  // dropout_rate should be the protocol's omega (used to size k and t).
  secagg::SecurityRequirements requirements;
  int num_threads = 2;  // devices' work per phase; results do not depend on it
  // Against an active server: signed advertisements + the consistency check
  // (common/secagg/signing.h; secagg::SimulationSpec::signing).
  bool active = false;
  // One key setup for the whole job (common/secagg/session.h): the first
  // aggregation's devices are the session's, its k and t stay fixed, and
  // every later aggregation masks with round seeds of the setup's pairwise
  // keys — no X25519 after the first. Later requests name their
  // participants by SecureSumRequest::device_ids; their abort threshold is
  // at least the session's t. Before a round-1 request, a session that more
  // than (n - min_survivors) / 2 of its devices missed is set up anew.
  bool session = false;
};

// "secagg+" for the Harary graph, "secagg" for the complete one.
const char* AggregationName(secagg::GraphKind graph);

// A SecureSumFn backed by the secure-aggregation state machines. Not
// thread-safe (it owns `rng`); call it from one thread.
SecureSumFn MakeSecAggSum(SecAggSumOptions options, random::Csprng rng);

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_SECAGG_SUM_H_
