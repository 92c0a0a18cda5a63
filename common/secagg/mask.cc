#include "common/secagg/mask.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "common/base/parallel_for.h"
#include "common/base/status_macros.h"
#include "common/crypto/mod2k.h"

namespace fedmf::secagg {

absl::Status ApplyMask(std::span<const uint8_t> seed, int bits, crypto::MaskSign sign,
                       std::span<uint64_t> acc) {
  const MaskTerm term{seed, sign};
  return ApplyMasks(std::span<const MaskTerm>(&term, 1), bits, acc);
}

namespace {

// 8 KiB of running sum: stays in L1 while every keystream is added.
constexpr size_t kBlock = 2048;
// Mask words (4 bytes) per AES block.
constexpr size_t kWordsPerAesBlock = crypto::kAesBlockBytes / sizeof(uint32_t);
// Fewer words than this per thread are not worth a thread (each thread
// expands every term's key schedule once: ~0.1 us against ~3 us of keystream).
constexpr size_t kMinWordsPerThread = 4 * kBlock;

// Every term's keystream words [first_word, first_word + acc.size()) added to
// `acc`, which holds those words of the vector. bits <= 32; first_word a
// multiple of kWordsPerAesBlock.
absl::Status ApplyMasksToPart(std::span<const MaskTerm> terms, int bits, std::span<uint64_t> acc,
                              size_t first_word) {
  std::vector<crypto::AesCtrPrg> prgs;
  prgs.reserve(terms.size());
  for (const MaskTerm& t : terms) {
    ASSIGN_OR_RETURN(crypto::AesCtrPrg prg,
                     crypto::AesCtrPrg::CreateAtBlock(t.seed, first_word / kWordsPerAesBlock));
    prgs.push_back(std::move(prg));
  }
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

}  // namespace

absl::Status ApplyMasks(std::span<const MaskTerm> terms, int bits, std::span<uint64_t> acc,
                        int threads) {
  RETURN_IF_ERROR(crypto::CheckModulusBits(bits));
  if (bits > 32) {
    for (const MaskTerm& t : terms)
      RETURN_IF_ERROR(crypto::ApplyMaskMod2k(t.seed, bits, t.sign, acc));
    return absl::OkStatus();
  }
  // Parts start at multiples of kBlock, so each is a whole number of AES
  // blocks into every keystream.
  static_assert(kBlock % kWordsPerAesBlock == 0);
  return base::ParallelChunks(
      acc.size(), threads, kMinWordsPerThread, kBlock, [&](size_t begin, size_t end) {
        return ApplyMasksToPart(terms, bits, acc.subspan(begin, end - begin), begin);
      });
}

}  // namespace fedmf::secagg
