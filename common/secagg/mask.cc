#include "common/secagg/mask.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <bit>

#include "common/base/status_macros.h"
#include "common/crypto/mod2k.h"

namespace fedmf::secagg {
namespace {

constexpr size_t kWords = 4096;  // 16 KiB of keystream per PRG call

}  // namespace

absl::Status ApplyMask(std::span<const uint8_t> seed, int bits, crypto::MaskSign sign,
                       std::span<uint64_t> acc) {
  RETURN_IF_ERROR(crypto::CheckModulusBits(bits));
  if (bits > 32) return crypto::ApplyMaskMod2k(seed, bits, sign, acc);
  ASSIGN_OR_RETURN(crypto::AesCtrPrg prg, crypto::AesCtrPrg::Create(seed));
  // Keystream straight into uint32 storage (uint8_t may alias anything), so
  // the add loop below is a plain vectorizable loop.
  alignas(64) uint32_t words[kWords];
  const uint64_t mask = crypto::LowBitsMask(bits);
  absl::Status status = absl::OkStatus();
  for (size_t pos = 0; pos < acc.size(); pos += kWords) {
    const size_t take = std::min(kWords, acc.size() - pos);
    status = prg.Fill(std::span<uint8_t>(reinterpret_cast<uint8_t*>(words), 4 * take));
    if (!status.ok()) break;
    if constexpr (std::endian::native == std::endian::big) {
      for (size_t i = 0; i < take; ++i) words[i] = __builtin_bswap32(words[i]);  // stream is LE
    }
    uint64_t* a = acc.data() + pos;
    // Wrapping uint64 arithmetic, then reduce: 2^bits divides 2^64.
    if (sign == crypto::MaskSign::kAdd) {
      for (size_t i = 0; i < take; ++i) a[i] = (a[i] + words[i]) & mask;
    } else {
      for (size_t i = 0; i < take; ++i) a[i] = (a[i] - words[i]) & mask;
    }
  }
  OPENSSL_cleanse(words, sizeof(words));  // mask words are as secret as the seed
  return status;
}

}  // namespace fedmf::secagg
