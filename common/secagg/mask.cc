#include "common/secagg/mask.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "common/base/status_macros.h"
#include "common/crypto/mod2k.h"

namespace fedmf::secagg {

absl::Status ApplyMask(std::span<const uint8_t> seed, int bits, crypto::MaskSign sign,
                       std::span<uint64_t> acc) {
  const MaskTerm term{seed, sign};
  return ApplyMasks(std::span<const MaskTerm>(&term, 1), bits, acc);
}

absl::Status ApplyMasks(std::span<const MaskTerm> terms, int bits, std::span<uint64_t> acc) {
  RETURN_IF_ERROR(crypto::CheckModulusBits(bits));
  if (bits > 32) {
    for (const MaskTerm& t : terms)
      RETURN_IF_ERROR(crypto::ApplyMaskMod2k(t.seed, bits, t.sign, acc));
    return absl::OkStatus();
  }
  std::vector<crypto::AesCtrPrg> prgs;
  prgs.reserve(terms.size());
  for (const MaskTerm& t : terms) {
    ASSIGN_OR_RETURN(crypto::AesCtrPrg prg, crypto::AesCtrPrg::Create(t.seed));
    prgs.push_back(std::move(prg));
  }
  // 8 KiB of running sum: stays in L1 while every keystream is added.
  constexpr size_t kBlock = 2048;
  alignas(64) uint32_t sum[kBlock];
  const uint64_t mask = crypto::LowBitsMask(bits);
  absl::Status status = absl::OkStatus();
  for (size_t pos = 0; pos < acc.size() && status.ok(); pos += kBlock) {
    const size_t take = std::min(kBlock, acc.size() - pos);
    uint64_t* a = acc.data() + pos;
    // Wrapping uint32 arithmetic is exact mod 2^bits, since 2^bits divides 2^32.
    for (size_t i = 0; i < take; ++i) sum[i] = static_cast<uint32_t>(a[i]);
    for (size_t t = 0; t < prgs.size() && status.ok(); ++t) {
      status = prgs[t].AccumulateWords32(std::span<uint32_t>(sum, take), terms[t].sign);
    }
    for (size_t i = 0; i < take; ++i) a[i] = sum[i] & mask;
  }
  OPENSSL_cleanse(sum, sizeof(sum));
  return status;
}

}  // namespace fedmf::secagg
