#include "common/secagg/key_derivation.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "common/base/status_macros.h"
#include "common/crypto/hkdf.h"

namespace fedmf::secagg {
namespace {

void AppendU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::vector<uint8_t> Label(std::string_view name, uint64_t aggregation_id, DeviceId a,
                           std::optional<DeviceId> b) {
  std::vector<uint8_t> out;
  out.reserve(name.size() + 3 * sizeof(uint64_t));
  out.assign(name.begin(), name.end());
  AppendU64(out, aggregation_id);
  AppendU64(out, a);
  if (b.has_value()) AppendU64(out, *b);
  return out;
}

absl::StatusOr<crypto::SecretBytes> AgreeAndDerive(const crypto::X25519PrivateKey& sk,
                                                   const crypto::X25519PublicKey& peer,
                                                   const std::vector<uint8_t>& info) {
  ASSIGN_OR_RETURN(crypto::SecretBytes shared, sk.Agree(peer));
  return crypto::HkdfSha256(shared.span(), {}, info, kSecretBytes);
}

}  // namespace

absl::StatusOr<ChannelKeys> DeriveChannelKeys(const crypto::X25519PrivateKey& c_sk,
                                              const crypto::X25519PublicKey& peer_c_pk,
                                              uint64_t aggregation_id, DeviceId self,
                                              DeviceId peer) {
  ASSIGN_OR_RETURN(crypto::SecretBytes shared, c_sk.Agree(peer_c_pk));
  absl::StatusOr<crypto::SecretBytes> send = crypto::HkdfSha256(
      shared.span(), {}, Label("fedmf/secagg/v1/channel", aggregation_id, self, peer),
      kSecretBytes);
  if (!send.ok()) return send.status();
  absl::StatusOr<crypto::SecretBytes> receive = crypto::HkdfSha256(
      shared.span(), {}, Label("fedmf/secagg/v1/channel", aggregation_id, peer, self),
      kSecretBytes);
  if (!receive.ok()) return receive.status();
  return ChannelKeys{std::move(*send), std::move(*receive)};
}

absl::StatusOr<crypto::SecretBytes> DeriveMaskSeed(const crypto::X25519PrivateKey& s_sk,
                                                   const crypto::X25519PublicKey& peer_s_pk,
                                                   uint64_t aggregation_id, DeviceId a,
                                                   DeviceId b) {
  return AgreeAndDerive(
      s_sk, peer_s_pk,
      Label("fedmf/secagg/v1/mask", aggregation_id, std::min(a, b), std::max(a, b)));
}

absl::StatusOr<std::vector<uint8_t>> CommitSelfMaskSeed(std::span<const uint8_t> b,
                                                        uint64_t aggregation_id, DeviceId owner) {
  absl::StatusOr<crypto::SecretBytes> c = crypto::HkdfSha256(
      b, {}, Label("fedmf/secagg/v1/commit-b", aggregation_id, owner, std::nullopt),
      kCommitmentBytes);
  if (!c.ok()) return c.status();
  return std::vector<uint8_t>(c->span().begin(), c->span().end());
}

absl::StatusOr<crypto::SecretBytes> DeriveRoundMaskSeed(std::span<const uint8_t> mask_key,
                                                        uint64_t aggregation_id, DeviceId a,
                                                        DeviceId b) {
  return crypto::HkdfSha256Expand(
      mask_key, Label("fedmf/secagg/v1/round-mask", aggregation_id, std::min(a, b), std::max(a, b)),
      kSecretBytes);
}

absl::StatusOr<crypto::SecretBytes> DeriveRecoveryPad(std::span<const uint8_t> e,
                                                      uint64_t aggregation_id, DeviceId owner,
                                                      DeviceId peer) {
  return crypto::HkdfSha256Expand(
      e, Label("fedmf/secagg/v1/recovery-pad", aggregation_id, owner, peer), kSecretBytes);
}

absl::StatusOr<std::vector<uint8_t>> CommitRecoveryKey(std::span<const uint8_t> e,
                                                       uint64_t aggregation_id, DeviceId owner) {
  absl::StatusOr<crypto::SecretBytes> c = crypto::HkdfSha256Expand(
      e, Label("fedmf/secagg/v1/commit-e", aggregation_id, owner, std::nullopt), kCommitmentBytes);
  if (!c.ok()) return c.status();
  return std::vector<uint8_t>(c->span().begin(), c->span().end());
}

crypto::SecretBytes XorSecret(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  crypto::SecretBytes out(std::min(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) out.data()[i] = a[i] ^ b[i];
  return out;
}

bool IsLowOrderX25519Key(const crypto::X25519PublicKey& key) {
  static constexpr uint8_t kLowOrder[7][32] = {
      {0},
      {1},
      {0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3,
       0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32,
       0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00},
      {0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1,
       0x55, 0x9c, 0x83, 0xef, 0x5b, 0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c,
       0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd, 0xd0, 0x9f, 0x11, 0x57},
      {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
      {0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
      {0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
  };
  // Public keys are public: no need for constant time.
  for (const auto& bad : kLowOrder) {
    bool same = (key[31] & 0x7f) == bad[31];
    for (size_t i = 0; same && i < 31; ++i) same = key[i] == bad[i];
    if (same) return true;
  }
  return false;
}

std::vector<uint8_t> ShareBundleAad(uint64_t aggregation_id, DeviceId sender, DeviceId recipient) {
  return Label("fedmf/secagg/v1/shares", aggregation_id, sender, recipient);
}

}  // namespace fedmf::secagg
