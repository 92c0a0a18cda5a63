// Vector arithmetic in Z_{2^k}, 1 <= k <= 64, on uint64 storage: the group in
// which secure aggregation adds masked inputs. Unsigned arithmetic wraps mod
// 2^64 and 2^k divides 2^64, so masking the result reduces it mod 2^k.
#ifndef FEDMF_COMMON_CRYPTO_MOD2K_H_
#define FEDMF_COMMON_CRYPTO_MOD2K_H_

#include <cstdint>
#include <span>

#include "absl/status/status.h"

namespace fedmf::crypto {

// 2^bits - 1 for 1 <= bits <= 64 (callers validate `bits` first).
constexpr uint64_t LowBitsMask(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// OK iff 1 <= bits <= 64.
absl::Status CheckModulusBits(int bits);

// acc[i] = acc[i] + x[i] (mod 2^bits); sizes must match.
absl::Status AddMod2k(std::span<uint64_t> acc, std::span<const uint64_t> x, int bits);
// acc[i] = acc[i] - x[i] (mod 2^bits); sizes must match.
absl::Status SubMod2k(std::span<uint64_t> acc, std::span<const uint64_t> x, int bits);

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_MOD2K_H_
