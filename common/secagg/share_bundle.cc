#include "common/secagg/share_bundle.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::secagg {
namespace {

void StoreU64(uint64_t v, uint8_t* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t LoadU64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 8; i-- > 0;) v = (v << 8) | in[i];
  return v;
}

}  // namespace

crypto::SecretBytes EncodeShareBundle(const ShareBundle& bundle) {
  crypto::SecretBytes out(kShareBundleBytes);
  uint8_t* p = out.data();
  StoreU64(bundle.owner, p);
  StoreU64(bundle.holder, p + 8);
  size_t off = 16;
  for (const crypto::ShamirShare* share : {&bundle.s_sk_share, &bundle.b_share}) {
    std::vector<uint8_t> bytes = crypto::SerializeShamirShare(*share);
    // Callers only encode shares of 32-byte secrets; anything else is a bug
    // that the recipient's size check would catch, so truncate defensively.
    std::copy_n(bytes.begin(), std::min(bytes.size(), kSerializedShareBytes), p + off);
    OPENSSL_cleanse(bytes.data(), bytes.size());
    off += kSerializedShareBytes;
  }
  return out;
}

absl::StatusOr<crypto::ShamirShare> ParseSecretShare(std::span<const uint8_t> bytes) {
  if (bytes.size() != kSerializedShareBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("share has ", bytes.size(), " bytes, expected ", kSerializedShareBytes));
  }
  ASSIGN_OR_RETURN(crypto::ShamirShare share, crypto::ParseShamirShare(bytes));
  if (share.secret_size != kSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("share is of a ", share.secret_size, "-byte secret, expected 32"));
  }
  return share;
}

absl::StatusOr<ShareBundle> DecodeShareBundle(std::span<const uint8_t> bytes) {
  if (bytes.size() != kShareBundleBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("share bundle has ", bytes.size(), " bytes, expected ", kShareBundleBytes));
  }
  ShareBundle out;
  out.owner = LoadU64(bytes.data());
  out.holder = LoadU64(bytes.data() + 8);
  absl::StatusOr<crypto::ShamirShare> s =
      ParseSecretShare(bytes.subspan(16, kSerializedShareBytes));
  if (!s.ok()) return s.status();
  absl::StatusOr<crypto::ShamirShare> b =
      ParseSecretShare(bytes.subspan(16 + kSerializedShareBytes, kSerializedShareBytes));
  if (!b.ok()) return b.status();
  out.s_sk_share = std::move(*s);
  out.b_share = std::move(*b);
  return out;
}

}  // namespace fedmf::secagg
