// What the per-phase client tests share (client_r*_test.cc,
// client_consistency_check_test.cc): device 2 of the roster {1, 2, 3, 4} in
// the complete graph, its context as the state machine would build it, and
// the neighbours' side of the cryptography (their keys, their sealing), so a
// test can hand one phase exactly the message it wants and open what the
// phase sends.
#ifndef FEDMF_TESTS_UNIT_SECAGG_CLIENT_PHASE_FIXTURE_H_
#define FEDMF_TESTS_UNIT_SECAGG_CLIENT_PHASE_FIXTURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/aes_gcm.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/random/csprng.h"
#include "common/secagg/config.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_phases.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/messages.h"
#include "common/secagg/share_bundle.h"
#include "common/secagg/signing.h"
#include "gtest/gtest.h"

namespace fedmf::secagg::testing {

inline constexpr DeviceId kSelf = 2;
inline constexpr uint64_t kAggregation = 0x5ECA66;

inline SessionConfig PhaseTestConfig(int threshold = 2, int min_survivors = 2) {
  SessionConfig c;
  c.aggregation_id = kAggregation;
  c.roster = {1, 2, 3, 4};
  c.graph = GraphKind::kComplete;
  c.threshold = threshold;
  c.min_survivors = min_survivors;
  c.vector_length = 4;
  c.bits = 16;
  return c;
}

// Device kSelf's context: neighbours {1, 3, 4}, input {1, 2, 3, 4}.
inline internal::ClientContext PhaseTestContext(int threshold = 2, int min_survivors = 2,
                                                uint64_t seed = 7) {
  return internal::ClientContext{PhaseTestConfig(threshold, min_survivors),
                                 kSelf,
                                 {1, 3, 4},
                                 random::Csprng::FromSeed(seed),
                                 std::vector<uint64_t>{1, 2, 3, 4},
                                 std::nullopt,
                                 {},
                                 nullptr};
}

inline crypto::SecretBytes RandomSecret(random::Csprng& rng) {
  crypto::SecretBytes s(kSecretBytes);
  rng.FillBytes(s.data(), s.size());
  return s;
}

// A neighbour's two X25519 key pairs, as it would advertise them.
struct TestNeighbour {
  DeviceId id;
  crypto::X25519PrivateKey c_sk;
  crypto::X25519PrivateKey s_sk;

  static TestNeighbour Make(DeviceId id, random::Csprng& rng) {
    return TestNeighbour{id, *crypto::X25519PrivateKey::Generate(rng),
                         *crypto::X25519PrivateKey::Generate(rng)};
  }
  NeighbourKeys Advertisement() const {
    NeighbourKeys nk;
    nk.device = id;
    nk.c_pk.assign(c_sk.public_key().begin(), c_sk.public_key().end());
    nk.s_pk.assign(s_sk.public_key().begin(), s_sk.public_key().end());
    return nk;
  }
};

// `shares` of one owner's two secrets, split for holders H = sorted ids.
inline std::vector<crypto::ShamirShare> SplitSecret(const crypto::SecretBytes& secret,
                                                    size_t threshold, size_t holders,
                                                    random::Csprng& rng) {
  return *crypto::ShamirSplit(secret.span(), threshold, holders, rng);
}

// A share bundle `owner` → `holder`, sealed under `key` as a device would.
inline std::vector<uint8_t> SealBundle(const crypto::SecretBytes& key, DeviceId owner,
                                       DeviceId holder, const crypto::ShamirShare& s_sk_share,
                                       const crypto::ShamirShare& b_share, random::Csprng& rng) {
  const crypto::SecretBytes plain =
      EncodeShareBundle(ShareBundle{owner, holder, s_sk_share, b_share});
  return *crypto::AesGcmSeal(key.span(), plain.span(), ShareBundleAad(kAggregation, owner, holder),
                             rng);
}

// The bundle device kSelf sealed to `holder` under `key`, opened and decoded.
inline absl::StatusOr<ShareBundle> OpenBundle(const crypto::SecretBytes& key, DeviceId holder,
                                              const std::vector<uint8_t>& sealed) {
  absl::StatusOr<crypto::SecretBytes> plain =
      crypto::AesGcmOpen(key.span(), sealed, ShareBundleAad(kAggregation, kSelf, holder));
  if (!plain.ok()) return plain.status();
  return DecodeShareBundle(plain->span());
}

// A signing identity whose credential the certifier below accepts: the
// credential is the host name, and every key it names is accepted for it.
inline ClientSigning TestSigning(random::Csprng& rng, std::string host) {
  crypto::Ed25519PrivateKey key = *crypto::Ed25519PrivateKey::Generate(rng);
  std::vector<uint8_t> credential(host.begin(), host.end());
  KeyCertifier certifier = [](DeviceId, const crypto::Ed25519PublicKey&,
                              std::span<const uint8_t> c) -> absl::StatusOr<std::string> {
    if (c.empty()) return absl::PermissionDeniedError("no credential");
    return std::string(c.begin(), c.end());
  };
  return ClientSigning{std::move(key), std::move(credential), std::move(certifier),
                       std::move(host)};
}

}  // namespace fedmf::secagg::testing

#endif  // FEDMF_TESTS_UNIT_SECAGG_CLIENT_PHASE_FIXTURE_H_
