#include "common/crypto/shamir.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/gf127.h"

namespace fedmf::crypto {
namespace {

using gf127::Elem;

static_assert(kShamirChunkBytes * 8 < 127, "a chunk must be < p");
static_assert(kShamirElementBytes == gf127::kElemBytes);

// Wipes a vector of field elements that held secret material.
void Cleanse(std::vector<Elem>& v) {
  if (!v.empty()) OPENSSL_cleanse(v.data(), v.size() * sizeof(Elem));
}

// Uniform in [0, p): 127 random bits, rejecting the single value p.
Elem UniformElem(random::Csprng& rng) {
  uint8_t buf[gf127::kElemBytes];
  Elem e;
  do {
    rng.FillBytes(buf, sizeof(buf));
    e = gf127::Load(buf) & gf127::kP;
  } while (e == gf127::kP);
  OPENSSL_cleanse(buf, sizeof(buf));
  return e;
}

Elem LoadChunk(std::span<const uint8_t> secret, size_t chunk) {
  const size_t begin = chunk * kShamirChunkBytes;
  const size_t end = std::min(secret.size(), begin + kShamirChunkBytes);
  Elem c = 0;
  for (size_t i = end; i-- > begin;) c = (c << 8) | secret[i];
  return c;
}

absl::Status ValidateShape(const ShamirShare& s) {
  if (s.x == 0) return absl::InvalidArgumentError("Shamir share has x = 0 (x = 0 is the secret)");
  if (s.secret_size == 0 || s.secret_size > kShamirMaxSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shamir share secret_size ", s.secret_size, " outside [1, 65536]"));
  }
  const size_t want = ShamirChunkCount(s.secret_size) * kShamirElementBytes;
  if (s.y.size() != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shamir share y has ", s.y.size(), " bytes, expected ", want));
  }
  for (size_t off = 0; off < s.y.size(); off += kShamirElementBytes) {
    if (!gf127::IsCanonical(gf127::Load(s.y.data() + off))) {
      return absl::InvalidArgumentError("Shamir share holds a field element >= 2^127 - 1");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<ShamirShare>> ShamirSplit(std::span<const uint8_t> secret,
                                                     size_t threshold, size_t num_shares,
                                                     random::Csprng& rng) {
  if (secret.empty() || secret.size() > kShamirMaxSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shamir: secret size ", secret.size(), " outside [1, 65536]"));
  }
  if (threshold < 1 || threshold > num_shares || num_shares > kShamirMaxShares) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shamir: need 1 <= t <= n <= 2^20, got t=", threshold, " n=", num_shares));
  }
  const size_t chunks = ShamirChunkCount(secret.size());
  std::vector<ShamirShare> shares(num_shares);
  for (size_t i = 0; i < num_shares; ++i) {
    shares[i].x = static_cast<uint32_t>(i + 1);
    shares[i].secret_size = static_cast<uint32_t>(secret.size());
    shares[i].y.resize(chunks * kShamirElementBytes);
  }
  std::vector<Elem> coeffs(threshold);  // coeffs[k] multiplies x^k
  for (size_t c = 0; c < chunks; ++c) {
    coeffs[0] = LoadChunk(secret, c);
    for (size_t k = 1; k < threshold; ++k) coeffs[k] = UniformElem(rng);
    for (size_t i = 0; i < num_shares; ++i) {
      const Elem x = shares[i].x;
      Elem y = 0;
      for (size_t k = threshold; k-- > 0;) y = gf127::Add(gf127::Mul(y, x), coeffs[k]);  // Horner
      gf127::Store(y, shares[i].y.data() + c * kShamirElementBytes);
    }
  }
  Cleanse(coeffs);
  return shares;
}

absl::StatusOr<SecretBytes> ShamirReconstruct(std::span<const ShamirShare> shares,
                                              size_t threshold) {
  if (threshold < 1) return absl::InvalidArgumentError("Shamir: threshold must be >= 1");
  if (shares.size() < threshold) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shamir: ", shares.size(), " shares, need at least ", threshold));
  }
  std::vector<uint32_t> xs;
  xs.reserve(shares.size());
  for (const ShamirShare& s : shares) {
    RETURN_IF_ERROR(ValidateShape(s));
    if (s.secret_size != shares[0].secret_size) {
      return absl::InvalidArgumentError("Shamir: shares of secrets of different sizes");
    }
    xs.push_back(s.x);
  }
  std::sort(xs.begin(), xs.end());
  if (std::adjacent_find(xs.begin(), xs.end()) != xs.end()) {
    return absl::InvalidArgumentError("Shamir: duplicate share x-coordinates");
  }

  const std::span<const ShamirShare> used = shares.first(threshold);
  std::vector<Elem> points(threshold);
  for (size_t j = 0; j < threshold; ++j) points[j] = used[j].x;
  ASSIGN_OR_RETURN(std::vector<Elem> lambda, gf127::LagrangeCoefficients(points, 0));

  const size_t size = shares[0].secret_size;
  const size_t chunks = ShamirChunkCount(size);
  SecretBytes secret(size);
  for (size_t c = 0; c < chunks; ++c) {
    Elem value = 0;
    for (size_t j = 0; j < threshold; ++j) {
      value = gf127::Add(
          value, gf127::Mul((lambda)[j], gf127::Load(used[j].y.data() + c * kShamirElementBytes)));
    }
    // A genuine chunk has at most `len` bytes; anything above means the
    // shares do not come from one sharing of a secret of this size.
    const size_t len = std::min(kShamirChunkBytes, size - c * kShamirChunkBytes);
    const bool fits = (value >> (8 * len)) == 0;
    for (size_t b = 0; b < len; ++b) {
      secret.data()[c * kShamirChunkBytes + b] = static_cast<uint8_t>(value >> (8 * b));
    }
    value = 0;
    if (!fits) {
      return absl::DataLossError("Shamir: shares are inconsistent (reconstructed chunk too large)");
    }
  }
  return secret;
}

std::vector<uint8_t> SerializeShamirShare(const ShamirShare& share) {
  std::vector<uint8_t> out(kShamirShareHeaderBytes + share.y.size());
  for (int b = 0; b < 4; ++b) {
    out[b] = static_cast<uint8_t>(share.x >> (8 * b));
    out[4 + b] = static_cast<uint8_t>(share.secret_size >> (8 * b));
  }
  std::copy(share.y.begin(), share.y.end(), out.begin() + kShamirShareHeaderBytes);
  return out;
}

absl::StatusOr<ShamirShare> ParseShamirShare(std::span<const uint8_t> bytes) {
  if (bytes.size() < kShamirShareHeaderBytes) {
    return absl::InvalidArgumentError("Shamir share shorter than its 8-byte header");
  }
  ShamirShare s;
  for (int b = 0; b < 4; ++b) {
    s.x |= static_cast<uint32_t>(bytes[b]) << (8 * b);
    s.secret_size |= static_cast<uint32_t>(bytes[4 + b]) << (8 * b);
  }
  s.y.assign(bytes.begin() + kShamirShareHeaderBytes, bytes.end());
  RETURN_IF_ERROR(ValidateShape(s));
  return s;
}

}  // namespace fedmf::crypto
