// Fixed-point encoding of real vectors into Z_P, P = 2^64, for the masked
// aggregation through the third party (reuses crypto::FixedPointCodec).
//
// Scale: x -> round(x * 2^f) mod 2^64 (two's complement). Defaults
// (ZpParams): f = 24, every encoded coordinate |x| <= B = 2^20 (gradients are
// a few units; a Theorem-2 noise piece exceeds 2^20 only for eps < 1e-3 or a
// ~30-sigma draw), at most N = 2^14 summands per sum. Then any honest sum has
// |integer| <= N * B * 2^f = 2^58 < 2^63: it never wraps. Decoding checks that
// bound: a sum whose masks were not removed (a uniform value mod 2^64) passes
// one coordinate with probability 2^-5 and a d = 50 vector with 2^-250, so a
// missing Sigma psi or a wrap-around fails loudly instead of decoding to junk.
#ifndef FEDMF_COMMON_HUA_ZP_CODEC_H_
#define FEDMF_COMMON_HUA_ZP_CODEC_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/fixed_point.h"
#include "common/hua/params.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

class ZpCodec {
 public:
  static absl::StatusOr<ZpCodec> Create(const ZpParams& p);

  // kOutOfRange naming the coordinate if |x| > B or x is not finite.
  absl::StatusOr<std::vector<uint64_t>> Encode(std::span<const double> x) const;
  // Decodes a sum of `summands` encodings (1 <= summands <= N). kDataLoss if
  // any coordinate's integer exceeds summands * ceil(B 2^f): masks left in,
  // or a sum that wrapped.
  absl::StatusOr<std::vector<double>> DecodeSum(std::span<const uint64_t> sum,
                                                uint64_t summands) const;

  // d values uniform in Z_{2^64}: a one-time pad for one encoded vector.
  static std::vector<uint64_t> RandomMask(random::Csprng& rng, int32_t dim);
  // acc += x and acc -= x (mod 2^64); sizes must match (aborts otherwise).
  static void Add(std::span<uint64_t> acc, std::span<const uint64_t> x);
  static void Sub(std::span<uint64_t> acc, std::span<const uint64_t> x);

  double max_abs() const { return codec_.max_abs(); }
  uint64_t max_summands() const { return codec_.max_summands(); }
  int frac_bits() const { return codec_.frac_bits(); }

 private:
  explicit ZpCodec(crypto::FixedPointCodec codec) : codec_(codec) {}
  crypto::FixedPointCodec codec_;
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_ZP_CODEC_H_
