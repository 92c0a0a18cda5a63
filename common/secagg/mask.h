// The mask expansion secure aggregation uses: PRG(seed) as a vector in
// Z_{2^bits}, added to or subtracted from an accumulator in place.
//
// Why not crypto::ApplyMaskMod2k directly: it spends 8 keystream bytes per
// element, and expanding masks is half of a device's work (k+1 expansions of
// the whole vector). For bits <= 32 we take 4 bytes per element instead —
// still exactly uniform, since 2^bits divides 2^32 — halving the AES work.
// Stream (all parties must agree): AesCtrPrg(seed) keystream (aes_ctr_prg.h);
//   bits <= 32: element i = LE uint32 of bytes [4i, 4i+4) mod 2^bits;
//   bits  > 32: element i = LE uint64 of bytes [8i, 8i+8) mod 2^bits
//               (exactly crypto::ApplyMaskMod2k).
#ifndef FEDMF_COMMON_SECAGG_MASK_H_
#define FEDMF_COMMON_SECAGG_MASK_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "common/crypto/aes_ctr_prg.h"

namespace fedmf::secagg {

absl::Status ApplyMask(std::span<const uint8_t> seed, int bits, crypto::MaskSign sign,
                       std::span<uint64_t> acc);

// One term of a device's mask sum: ±PRG(seed).
struct MaskTerm {
  std::span<const uint8_t> seed;
  crypto::MaskSign sign = crypto::MaskSign::kAdd;
};

// Every term applied to `acc`, with the same result as one ApplyMask per
// term (ApplyMask is this with one term). Why: a device applies k + 1 masks
// to its whole vector; term by term that streams the vector k + 1 times
// through L2, while here each L1-sized block of the vector takes all k + 1
// keystreams before the next block (and for bits <= 32 is summed in uint32,
// twice the lanes per instruction). `threads` > 1 splits the vector into up
// to that many parts of at least 8192 elements (bits <= 32 only: for the
// server stripping a thousand self masks); the result is the same.
absl::Status ApplyMasks(std::span<const MaskTerm> terms, int bits, std::span<uint64_t> acc,
                        int threads = 1);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_MASK_H_
