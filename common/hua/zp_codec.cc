#include "common/hua/zp_codec.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/mod2k.h"

namespace fedmf::hua {
namespace {

constexpr int kBits = 64;  // P = 2^64

void CheckOk(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "fedmf: Z_P vector op: %s\n", std::string(s.message()).c_str());
    std::abort();
  }
}

}  // namespace

absl::StatusOr<ZpCodec> ZpCodec::Create(const ZpParams& p) {
  ASSIGN_OR_RETURN(auto codec,
                   crypto::FixedPointCodec::Create(kBits, p.frac_bits, p.max_abs, p.max_summands));
  return ZpCodec(codec);
}

absl::StatusOr<std::vector<uint64_t>> ZpCodec::Encode(std::span<const double> x) const {
  auto out = codec_.EncodeVector(x);
  if (!out.ok()) {
    return absl::OutOfRangeError(
        absl::StrCat("fixed-point encoding into Z_2^64 failed (bound |x| <= ", codec_.max_abs(),
                     "): ", out.status().message()));
  }
  return out;
}

absl::StatusOr<std::vector<double>> ZpCodec::DecodeSum(std::span<const uint64_t> sum,
                                                       uint64_t summands) const {
  if (summands < 1 || summands > codec_.max_summands()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a sum of ", summands, " encodings; the codec allows 1..", codec_.max_summands()));
  }
  // summands * M <= N * M < 2^63 by construction, so no overflow here.
  const uint64_t bound = summands * codec_.max_encoded_magnitude();
  std::vector<double> out(sum.size());
  for (size_t l = 0; l < sum.size(); ++l) {
    const int64_t x = codec_.DecodeSumToInteger(sum[l]);
    const uint64_t mag = x < 0 ? uint64_t(0) - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    if (mag > bound) {
      return absl::DataLossError(absl::StrCat(
          "decoded sum out of range at coordinate ", l, ": |", x, "| > ", bound, " (", summands,
          " summands): masks were not removed, or the sum wrapped around mod 2^64"));
    }
    out[l] = codec_.DecodeSum(sum[l]);
  }
  return out;
}

std::vector<uint64_t> ZpCodec::RandomMask(random::Csprng& rng, int32_t dim) {
  std::vector<uint64_t> m(static_cast<size_t>(dim));
  rng.FillBytes(reinterpret_cast<uint8_t*>(m.data()), m.size() * sizeof(uint64_t));
  return m;
}

void ZpCodec::Add(std::span<uint64_t> acc, std::span<const uint64_t> x) {
  CheckOk(crypto::AddMod2k(acc, x, kBits));
}

void ZpCodec::Sub(std::span<uint64_t> acc, std::span<const uint64_t> x) {
  CheckOk(crypto::SubMod2k(acc, x, kBits));
}

}  // namespace fedmf::hua
